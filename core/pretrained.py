"""A real pretrained Transformer computed by core: all-MiniLM-L6-v2, the sentence-transformers model.

The model's files (``model.safetensors``, ``config.json``, ``tokenizer.json``) ship with the app in
``assets/minilm/`` (see its README); this module maps the weights' names onto core's `EncoderOnly`, tokenizes
with the `tokenizers` library and mean-pools the token vectors into one sentence vector. Nothing is downloaded.

The architecture is BERT's: word + learned position + token-type embeddings, a LayerNorm on the sum, then
6 post-norm encoder layers (12 heads, d_model 384, d_ff 1536, GELU, torch-style LayerNorm with eps 1e-12),
no final norm. Hook names (``{i}`` = layer) are those of core.trace's encoder rows, plus
``src_embed.norm.hook_mean / hook_std / hook_normalized`` for the embedding LayerNorm.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import torch
from torch import nn

from .config import ModelConfig
from .model import EncoderOnly, build_model

MODEL_DIR = Path(__file__).resolve().parents[1] / "assets" / "minilm"  # the shipped model files
SPECIAL_TOKENS = ("[CLS]", "[SEP]")  # [CLS] opens the input, [SEP] closes each sentence
# Not used: a saved buffer [0, 1, ..., 511], and BERT's "pooler" (tanh(W h_[CLS] + b)), which mean pooling replaces.
IGNORED_WEIGHTS = ("embeddings.position_ids", "pooler.dense.weight", "pooler.dense.bias")
# core name -> name in model.safetensors; "{i}" is the layer index.
EMBEDDING_NAMES = {"src_embed.embed.weight": "embeddings.word_embeddings.weight",
                   "src_embed.positional.weight": "embeddings.position_embeddings.weight",
                   "src_embed.token_type.weight": "embeddings.token_type_embeddings.weight",
                   "src_embed.norm.weight": "embeddings.LayerNorm.weight",
                   "src_embed.norm.bias": "embeddings.LayerNorm.bias"}
LAYER_NAMES = {"self_attn.q_proj": "attention.self.query", "self_attn.k_proj": "attention.self.key",
               "self_attn.v_proj": "attention.self.value", "self_attn.out_proj": "attention.output.dense",
               "norm_self_attn": "attention.output.LayerNorm", "ff.linear1": "intermediate.dense",
               "ff.linear2": "output.dense", "norm_ff": "output.LayerNorm"}


def model_dir() -> Path:
    """The directory of the shipped model files (assets/minilm)."""
    return MODEL_DIR


def minilm_config(hf_config: dict) -> ModelConfig:
    """The `ModelConfig` of a BERT config.json (checks the parts core implements)."""
    if hf_config.get("hidden_act") != "gelu" or hf_config.get("position_embedding_type", "absolute") != "absolute":
        raise ValueError("only BERT models with GELU and absolute learned positions are supported")
    vocab = int(hf_config["vocab_size"])
    return ModelConfig(src_vocab=vocab, tgt_vocab=vocab, d_model=int(hf_config["hidden_size"]),
                       n_heads=int(hf_config["num_attention_heads"]), n_layers=int(hf_config["num_hidden_layers"]),
                       d_ff=int(hf_config["intermediate_size"]), max_len=int(hf_config["max_position_embeddings"]),
                       dropout=0.0, norm_first=False, positional="learned", activation="gelu", norm_style="torch",
                       norm_eps=float(hf_config["layer_norm_eps"]), kind="encoder-only",
                       pad_id=int(hf_config.get("pad_token_id", 0)), type_vocab=int(hf_config["type_vocab_size"]),
                       embed_scale=False, embed_norm=True)


def weight_names(n_layers: int) -> dict[str, str]:
    """{core parameter name: safetensors name} for every parameter of the encoder."""
    names = dict(EMBEDDING_NAMES)
    for i in range(n_layers):
        for ours, theirs in LAYER_NAMES.items():
            for part in ("weight", "bias"):
                names[f"encoder.layers.{i}.{ours}.{part}"] = f"encoder.layer.{i}.{theirs}.{part}"
    return names


def map_weights(tensors: dict[str, torch.Tensor], n_layers: int) -> dict[str, torch.Tensor]:
    """The file's tensors renamed for core. Raises ValueError if one is missing or left over."""
    names = weight_names(n_layers)
    missing = sorted(set(names.values()) - set(tensors))
    unused = sorted(set(tensors) - set(names.values()) - set(IGNORED_WEIGHTS))
    if missing or unused:
        raise ValueError(f"the weights do not match the architecture: missing {missing[:5]}, unused {unused[:5]}")
    return {ours: tensors[theirs] for ours, theirs in names.items()}


def load_model(directory: str | Path | None = None) -> EncoderOnly:
    """core's EncoderOnly with the shipped weights, in eval mode with gradients off (read-only use)."""
    from safetensors.torch import load_file

    directory = Path(directory) if directory is not None else model_dir()
    cfg = minilm_config(json.loads((directory / "config.json").read_text(encoding="utf-8")))
    model = build_model(cfg)
    state = map_weights(load_file(str(directory / "model.safetensors"), device="cpu"), cfg.n_layers)
    model.load_state_dict(state, strict=True)
    return model.eval().requires_grad_(False)


def load_tokenizer(directory: str | Path | None = None):
    """The WordPiece tokenizer (`tokenizers.Tokenizer`) from tokenizer.json, with padding and truncation off:
    `encode` pads a batch itself, and the caller checks lengths instead of losing tokens silently."""
    from tokenizers import Tokenizer

    directory = Path(directory) if directory is not None else model_dir()
    tokenizer = Tokenizer.from_file(str(directory / "tokenizer.json"))
    tokenizer.no_padding()
    tokenizer.no_truncation()
    return tokenizer


@dataclass(frozen=True)
class Encoded:
    """A tokenized batch, padded on the right with [PAD] (id `pad_id`) to its longest input."""
    ids: torch.Tensor  # (batch, n) token ids
    types: torch.Tensor  # (batch, n) 0 = first sentence, 1 = second
    mask: torch.Tensor  # (batch, n) True for real tokens (incl. [CLS], [SEP]), False for padding
    tokens: list[list[str]]  # WordPiece strings, without the padding
    words: list[list[int | None]]  # which word of its sentence each token comes from (None for specials)


def encode(tokenizer, texts: list[str] | list[tuple[str, str]], pad_id: int = 0) -> Encoded:
    """Tokenize sentences (or sentence pairs) into one right-padded batch."""
    found = tokenizer.encode_batch(list(texts))
    n = max(len(e.ids) for e in found)
    ids = torch.full((len(found), n), pad_id, dtype=torch.long)  # (batch, n)
    types = torch.zeros((len(found), n), dtype=torch.long)  # (batch, n)
    for row, e in enumerate(found):
        ids[row, : len(e.ids)] = torch.tensor(e.ids)
        types[row, : len(e.ids)] = torch.tensor(e.type_ids)
    mask = torch.arange(n)[None, :] < torch.tensor([len(e.ids) for e in found])[:, None]  # (batch, n)
    return Encoded(ids, types, mask, [list(e.tokens) for e in found], [list(e.word_ids) for e in found])


def mean_pool(hidden: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """Average of the real tokens' vectors (padding left out): (batch, n, d), (batch, n) -> (batch, d)."""
    weights = mask.to(hidden.dtype).unsqueeze(-1)  # (batch, n, 1)
    total = (hidden * weights).sum(dim=1)  # (batch, d)
    return total / weights.sum(dim=1).clamp(min=1e-9)  # (batch, d)


def sentence_embeddings(model: nn.Module, tokenizer, texts: list[str]) -> torch.Tensor:
    """One vector per sentence: encode, run the encoder, mean-pool. (len(texts), d_model)."""
    batch = encode(tokenizer, texts, model.cfg.pad_id)
    with torch.no_grad():
        hidden = model(batch.ids, batch.types, batch.mask)  # (batch, n, d_model)
    return mean_pool(hidden, batch.mask)  # (batch, d_model)


def cosine_similarity(vectors: torch.Tensor) -> torch.Tensor:
    """cos(u, v) = u·v / (|u| |v|) for every pair of rows: (m, d) -> (m, m)."""
    unit = vectors / vectors.norm(dim=-1, keepdim=True).clamp(min=1e-12)  # (m, d)
    return unit @ unit.T  # (m, m)


PATTERNS = ("previous", "next", "same_word", "special")


def head_patterns(weights: torch.Tensor, tokens: list[str], words: list[int | None],
                  types: list[int] | None = None) -> dict[str, torch.Tensor]:
    """How much each head attends, on average over the ordinary (non-special) query tokens, to:

    - "previous" / "next": the ordinary token just before / after it (queries with such a neighbour);
    - "same_word": the other WordPiece pieces of its own word (queries in words of 2+ pieces);
    - "special": [CLS] and [SEP] together.
    weights (..., n, n) for one input of n tokens -> {pattern: (...)}; NaN where no query qualifies.
    """
    special = torch.tensor([tok in SPECIAL_TOKENS for tok in tokens])  # (n,)
    types = types if types is not None else [0] * len(tokens)
    word = [(types[j], words[j]) if words[j] is not None else None for j in range(len(tokens))]
    same = torch.tensor([[a is not None and a == b and i != j for j, b in enumerate(word)]
                         for i, a in enumerate(word)])  # (n, n): other pieces of the same word
    ordinary = ~special  # (n,)
    shift = torch.zeros(len(tokens), len(tokens), dtype=torch.bool)
    shift[1:, :-1] = torch.eye(len(tokens) - 1, dtype=torch.bool)  # (n, n): key j = i - 1
    targets = {"previous": shift & ordinary[None, :], "next": shift.T & ordinary[None, :], "same_word": same,
               "special": special[None, :].expand(len(tokens), -1)}  # (n, n) each: the keys that count
    out = {}
    for name, keys in targets.items():
        queries = ordinary & keys.any(dim=1)  # (n,)
        share = (weights * keys).sum(dim=-1)  # (..., n): weight on those keys, per query
        count = queries.sum()
        out[name] = (share * queries).sum(dim=-1) / count if count else torch.full(share.shape[:-1], float("nan"))
    return out
