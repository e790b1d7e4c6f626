"""Fine-tuning a pretrained encoder, and what pretraining buys (lesson 15).

The sentences, and what the frozen model makes of them, are core.lab.finetune_data's. Three runs on the same
sentences, each a `SentenceClassifier` (optional embeddings -> encoder layers -> mean pooling -> a linear head to
the four topics) trained by a `FineTuneRun`:

- "frozen": MiniLM-L6 untouched, a head trained on its mean-pooled output;
- "finetune": the same, and MiniLM's top `top_layers` layers trained too (a lower learning rate for them);
- "random": the same architecture (all 6 layers, BERT's embeddings) from random weights, everything trained.

Frozen layers give the same output on every step, so the runs compute them once (`hidden_at`) and train only what
changes on top. The random run keeps only the embedding rows of the tokens the sentences use: the others would
never get a gradient, so leaving them out changes no number, only the time and the memory.
"""
from __future__ import annotations

import copy
import time
from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import nn

from ..hooks import trace
from ..model import Embeddings
from ..pretrained import encode, mean_pool
from .finetune_data import LANGUAGES, TOPICS, ReadSet, hidden_at, read_language

KINDS = ("frozen", "finetune", "random")
BERT_INIT_STD = 0.02  # BERT's initialization: every weight matrix drawn from N(0, 0.02²)


@dataclass(frozen=True)
class RunConfig:
    """One run: its kind, the sentences' language, how many top layers a "finetune" run trains, the budget."""
    kind: str = "frozen"
    lang: str = "en"
    top_layers: int = 2
    steps: int = 60
    batch_size: int = 16
    lr_head: float = 3e-3
    lr_encoder: float = 1e-4  # the pretrained layers of a "finetune" run
    lr_random: float = 5e-4  # every weight of a "random" run
    eval_every: int = 5
    seed: int = 0
    max_seconds: float = 90.0  # training time after which the run stops, whatever its steps

    def __post_init__(self):
        if self.kind not in KINDS or self.lang not in LANGUAGES:
            raise ValueError(f"unknown kind {self.kind!r} or language {self.lang!r}")
        if not 1 <= self.top_layers <= 6 or min(self.steps, self.batch_size, self.eval_every, self.max_seconds) <= 0:
            raise ValueError("top_layers must be 1..6; steps, batch_size, eval_every and max_seconds positive")

    def trained_layers(self, n_layers: int) -> int:
        """How many encoder layers this run trains (the top ones)."""
        return {"frozen": 0, "finetune": min(self.top_layers, n_layers), "random": n_layers}[self.kind]


class SentenceClassifier(nn.Module):
    """inputs -> [embeddings] -> layers -> mean over real tokens -> head: (batch, n_classes).

    With `embed`, the inputs are token ids (batch, n); without, hidden states (batch, n, d_model) computed
    below the first of `layers` (by frozen layers, once)."""

    def __init__(self, layers: nn.ModuleList, d_model: int, n_classes: int, embed: Embeddings | None = None):
        super().__init__()
        self.embed, self.layers, self.head = embed, layers, nn.Linear(d_model, n_classes)

    def pooled(self, inputs: torch.Tensor, types: torch.Tensor, keep: torch.Tensor) -> torch.Tensor:
        """The sentence vectors: (batch, d_model)."""
        x = self.embed(inputs, types) if self.embed is not None else inputs  # (batch, n, d_model)
        mask = keep[:, None, None, :]  # (batch, 1, 1, n)
        for layer in self.layers:
            x = layer(x, mask)  # (batch, n, d_model)
        return mean_pool(x, keep)  # (batch, d_model)

    def forward(self, inputs: torch.Tensor, types: torch.Tensor, keep: torch.Tensor) -> torch.Tensor:
        return self.head(self.pooled(inputs, types, keep))  # (batch, n_classes)


def bert_init(module: nn.Module, generator: torch.Generator) -> nn.Module:
    """BERT's initialization: matrices from N(0, BERT_INIT_STD²), biases 0, LayerNorm gains 1."""
    with torch.no_grad():
        for name, p in module.named_parameters():
            if p.dim() > 1:
                p.normal_(0.0, BERT_INIT_STD, generator=generator)
            else:
                p.fill_(0.0 if name.endswith("bias") else 1.0)
    return module


def random_copy(model: nn.Module, used: torch.Tensor, seed: int) -> tuple[Embeddings, nn.ModuleList]:
    """The pretrained model's embeddings (only the rows `used`) and layers, with BERT-initialized random weights."""
    with torch.random.fork_rng(devices=[]):
        embed = Embeddings.from_config(model.cfg, len(used))
    layers = copy.deepcopy(model.encoder.layers).requires_grad_(True)
    generator = torch.Generator().manual_seed(seed)
    return bert_init(embed, generator), bert_init(layers, generator)


class FineTuneRun:
    """One of the three runs, advanced a step at a time; held-out accuracy at step 0 and every `eval_every` steps.

    `model` is the shared pretrained MiniLM: it is read (frozen layers, copies of its top layers), never changed.
    `read` is `read_language(model, tokenizer, cfg.lang)`, computed here when not given (runs can share it)."""

    def __init__(self, model: nn.Module, tokenizer, cfg: RunConfig, read: dict[str, ReadSet] | None = None):
        self.cfg = cfg
        read = read if read is not None else read_language(model, tokenizer, cfg.lang)
        n_layers, d_model = model.cfg.n_layers, model.cfg.d_model
        self.trained = cfg.trained_layers(n_layers)
        if cfg.kind == "random":
            self.vocab = torch.unique(torch.cat([r.batch.ids.flatten() for r in read.values()]))  # (v,) sorted
            embed, layers = random_copy(model, self.vocab, cfg.seed)
            self.train_set, self.heldout = (read[s].token_inputs(self.vocab) for s in ("train", "heldout"))
        else:
            below = n_layers - self.trained
            embed, layers = None, copy.deepcopy(model.encoder.layers[below:]).requires_grad_(True)
            self.train_set, self.heldout = (read[s].inputs(below) for s in ("train", "heldout"))
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(cfg.seed)
            self.classifier = SentenceClassifier(layers, d_model, len(TOPICS), embed)
        body = [p for n, p in self.classifier.named_parameters() if not n.startswith("head.")]
        lr_body = cfg.lr_random if cfg.kind == "random" else cfg.lr_encoder
        self.optimizer: torch.optim.Optimizer | None = torch.optim.AdamW([{"params": body, "lr": lr_body},
                                            {"params": self.classifier.head.parameters(), "lr": cfg.lr_head}])
        self.batches = torch.Generator().manual_seed(cfg.seed)
        self.order: list[int] = []
        self.step, self.seconds = 0, 0.0
        self.history: list[tuple[int, float]] = [(0, self.evaluate())]  # (step, held-out accuracy)

    def done(self) -> bool:
        return self.step >= self.cfg.steps or self.timed_out()

    def timed_out(self) -> bool:
        return self.seconds >= self.cfg.max_seconds

    def next_batch(self) -> torch.Tensor:
        """The next `batch_size` training sentences: a fresh seeded shuffle each pass over the set."""
        if len(self.order) < self.cfg.batch_size:
            self.order += torch.randperm(len(self.train_set.labels), generator=self.batches).tolist()
        index, self.order = self.order[:self.cfg.batch_size], self.order[self.cfg.batch_size:]
        return torch.tensor(index)  # (batch,)

    def train_step(self) -> float:
        """One AdamW step on a batch; returns its cross-entropy."""
        start = time.perf_counter()
        batch = self.train_set.rows(self.next_batch())
        self.classifier.train()
        loss = F.cross_entropy(self.classifier(batch.x, batch.types, batch.keep), batch.labels)
        self.optimizer.zero_grad(set_to_none=True)
        loss.backward()
        self.optimizer.step()
        self.step += 1
        self.seconds += time.perf_counter() - start
        if self.step % self.cfg.eval_every == 0 or self.done():
            self.history.append((self.step, self.evaluate()))
        if self.done():  # a finished run needs no moments (twice the trained weights) and no gradients
            self.optimizer = None
            self.classifier.zero_grad(set_to_none=True)
        return loss.item()

    @torch.no_grad()
    def pooled(self) -> torch.Tensor:
        """The held-out sentence vectors the head sees now: (m, d_model)."""
        self.classifier.eval()
        return self.classifier.pooled(self.heldout.x, self.heldout.types, self.heldout.keep)

    def evaluate(self) -> float:
        """Accuracy on the held-out sentences."""
        with torch.no_grad():
            logits = self.classifier.head(self.pooled())  # (m, n_classes)
        return (logits.argmax(-1) == self.heldout.labels).float().mean().item()

    def predictions(self) -> torch.Tensor:
        """The predicted topic of every held-out sentence: (m,)."""
        with torch.no_grad():
            return self.classifier.head(self.pooled()).argmax(-1)  # (m,)


def train(run: FineTuneRun, seconds: float | None = None) -> FineTuneRun:
    """Step `run` until it is done or `seconds` have passed (the page trains in chunks; tests in one go)."""
    start = time.perf_counter()
    while not run.done() and (seconds is None or time.perf_counter() - start < seconds):
        run.train_step()
    return run


@torch.no_grad()
def attention_of(layers: nn.ModuleList, x: torch.Tensor, keep: torch.Tensor) -> torch.Tensor:
    """Every layer's attention weights for one sentence, read at the layers' hook points.
    x (1, n, d_model) entering the first layer, keep (1, n) -> (len(layers), h, n, n)."""
    def run():
        h = x  # (1, n, d_model)
        for layer in layers:
            h = layer(h, keep[:, None, None, :])  # (1, n, d_model)
    _, cache = trace(layers, run)
    return torch.stack([cache[f"{i}.self_attn.hook_weights"][0] for i in range(len(layers))])  # (L, h, n, n)


def head_change(before: torch.Tensor, after: torch.Tensor) -> torch.Tensor:
    """How much each head's attention moved: the total-variation distance ½ Σ_k |after - before| between its
    rows, averaged over the queries. 0 = the same weights, 1 = no key in common.
    (L, h, n, n) twice -> (L, h)."""
    return 0.5 * (after - before).abs().sum(dim=-1).mean(dim=-1)  # (L, h)


def pca_2d(vectors: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """The rows projected on their first two principal components, and the share of the variance each keeps.
    Each component's sign is chosen so that its largest coordinate is positive (the picture is then stable).
    (m, d) -> (m, 2), (2,)."""
    centred = vectors - vectors.mean(dim=0, keepdim=True)  # (m, d)
    _, s, vh = torch.linalg.svd(centred, full_matrices=False)  # s (r,), vh (r, d)
    axes = vh[:2]  # (2, d)
    axes = axes * torch.sign(axes.gather(1, axes.abs().argmax(dim=1, keepdim=True)))  # (2, d)
    share = s[:2] ** 2 / (s ** 2).sum()  # (2,)
    return centred @ axes.T, share  # (m, 2), (2,)


def attention_before_after(model: nn.Module, tokenizer, run: FineTuneRun, text: str) -> tuple[torch.Tensor, ...]:
    """Attention of every layer and head on `text`: the pretrained model's, and the run's after its training (the
    frozen lower layers unchanged, the run's own copies on top). Hooks go on `model`'s shared layers for a moment:
    callers serialise uses of `model`. -> before (L, h, n, n), after (L, h, n, n)."""
    if run.cfg.kind == "random":
        raise ValueError("a random run has no pretrained 'before'")
    batch = encode(tokenizer, [text], model.cfg.pad_id)
    below = model.cfg.n_layers - run.trained
    before = attention_of(model.encoder.layers, hidden_at(model, batch, 0), batch.mask)  # (L, h, n, n)
    top = attention_of(run.classifier.layers, hidden_at(model, batch, below), batch.mask)  # (trained, h, n, n)
    return before, torch.cat([before[:below], top])  # (L, h, n, n) twice
