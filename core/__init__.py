"""core: the Transformer, step by step, in plain PyTorch. No UI code lives here."""
from .attention import MultiHeadAttention, contextualize, scaled_dot_product_attention, similarity, softmax
from .checkpoints import Checkpoint, checkpoint_dict, load_checkpoint, save_checkpoint
from .config import ModelConfig
from .decoding import greedy_decode, next_token_logits
from .device import available_devices, default_device, to_numpy
from .hooks import HookPoint, hook_names
from .layers import Decoder, DecoderLayer, Encoder, EncoderLayer, FeedForward
from .masks import MASK_KINDS, additive_mask, apply_mask, causal_mask, decoder_mask, mask_of_kind, padding_mask
from .model import (DecoderOnly, Embeddings, Transformer, build_model, count_parameters, create_model,
                    init_parameters)
from .norm import LayerNorm
from .positional import apply_rotary, create_fixed_positional_encoding, sinusoidal_encoding
from .tasks import (BOS_ID, EOS_ID, IGNORE_INDEX, PAD_ID, TASKS, Batch, Task, TaskInputError, Vocabulary,
                    make_task)
from .trace import run_with_trace

__all__ = [
    "MultiHeadAttention", "contextualize", "scaled_dot_product_attention", "similarity", "softmax",
    "ModelConfig", "available_devices", "default_device", "to_numpy", "HookPoint", "hook_names",
    "Decoder", "DecoderLayer", "Encoder", "EncoderLayer", "FeedForward",
    "MASK_KINDS", "additive_mask", "apply_mask", "causal_mask", "decoder_mask", "mask_of_kind", "padding_mask",
    "DecoderOnly", "Embeddings", "Transformer", "build_model", "count_parameters", "create_model",
    "init_parameters", "LayerNorm", "apply_rotary", "create_fixed_positional_encoding", "sinusoidal_encoding",
    "run_with_trace", "Checkpoint", "checkpoint_dict", "load_checkpoint", "save_checkpoint", "greedy_decode",
    "next_token_logits", "BOS_ID", "EOS_ID", "IGNORE_INDEX", "PAD_ID", "TASKS", "Batch", "Task", "TaskInputError",
    "Vocabulary", "make_task",
]
# Training (Trainer, presets) lives in core.train and evaluation in core.evaluation, each imported on its own:
# `python -m core.train` runs it.
