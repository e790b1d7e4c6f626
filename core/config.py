"""`ModelConfig`: one frozen description of an assembled model. Variants with `dataclasses.replace`."""
from __future__ import annotations

from dataclasses import dataclass

KINDS = ("encoder-decoder", "decoder-only", "encoder-only")
POSITIONAL = ("sinusoidal", "learned", "rotary", "none")
ACTIVATIONS = ("relu", "gelu")


@dataclass(frozen=True)
class ModelConfig:
    src_vocab: int
    tgt_vocab: int
    d_model: int = 64
    n_heads: int = 2
    n_layers: int = 2
    d_ff: int = 128
    max_len: int = 128
    dropout: float = 0.1
    norm_first: bool = True  # pre-norm (GPT-2, the course) vs post-norm (the 2017 paper, BERT)
    positional: str = "sinusoidal"
    activation: str = "relu"
    norm_style: str = "annotated"  # see core.norm
    norm_eps: float | None = None  # None: the style's default
    bias: bool = True  # bias on the Q, K, V and output projections
    kind: str = "encoder-decoder"
    pad_id: int | None = None  # token id whose keys are masked out
    # BERT-style embeddings (core.pretrained): defaults keep the paper's sqrt(d_model) * embed + PE.
    type_vocab: int = 0  # token-type (segment A/B) embeddings added to the input; 0 = none
    embed_scale: bool = True  # multiply token embeddings by sqrt(d_model) (the paper); BERT does not
    embed_norm: bool = False  # a LayerNorm on the summed embeddings (BERT)

    def __post_init__(self):
        problems = []
        if self.d_model < 1 or self.n_heads < 1 or self.d_model % self.n_heads:
            problems.append(f"d_model={self.d_model} must be a positive multiple of n_heads={self.n_heads}")
        if self.kind not in KINDS:
            problems.append(f"kind must be one of {KINDS}")
        if self.positional not in POSITIONAL:
            problems.append(f"positional must be one of {POSITIONAL}")
        if self.activation not in ACTIVATIONS:
            problems.append(f"activation must be one of {ACTIVATIONS}")
        if not 0.0 <= self.dropout < 1.0:
            problems.append("dropout must be in [0, 1)")
        if self.type_vocab < 0:
            problems.append("type_vocab must be >= 0")
        if min(self.src_vocab, self.tgt_vocab, self.n_layers, self.d_ff, self.max_len) < 1:
            problems.append("vocabulary sizes, n_layers, d_ff and max_len must be positive")
        if problems:
            raise ValueError("; ".join(problems))

    @property
    def d_k(self) -> int:
        return self.d_model // self.n_heads

    def layer_kwargs(self) -> dict:
        """The plain arguments every encoder and decoder layer takes."""
        return dict(d_model=self.d_model, n_heads=self.n_heads, d_ff=self.d_ff, dropout=self.dropout,
                    norm_first=self.norm_first, activation=self.activation, norm_style=self.norm_style,
                    norm_eps=self.norm_eps, bias=self.bias, rotary=self.positional == "rotary")
