"""A device-checking fake GPU for tests: tensors sent to "cuda" stay on the CPU as `OnGpu`, whose .numpy() fails."""
from __future__ import annotations

import contextlib
import functools

import torch

FACTORIES = ("tensor", "as_tensor", "ones", "zeros", "full", "empty", "arange", "linspace", "eye", "rand", "randn",
             "randint", "randperm", "ones_like", "zeros_like", "full_like", "empty_like", "rand_like", "randn_like")


class OnGpu(torch.Tensor):
    """A CPU tensor that behaves as if it lived on a GPU where it matters here: no .numpy() before .cpu(), and no
    operation that mixes it with a CPU tensor of one or more dimensions (a real GPU refuses both)."""

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        tensors = [a for a in _flat((args, kwargs or {})) if isinstance(a, torch.Tensor)]
        if any(isinstance(a, OnGpu) for a in tensors) and func.__name__ not in LENIENT:
            cpu = [tuple(a.shape) for a in tensors if not isinstance(a, OnGpu) and a.dim() > 0]
            if cpu:
                raise AssertionError(f"{func.__name__} mixes GPU tensors with CPU tensors of shapes {cpu}")
        return super().__torch_function__(func, types, args, kwargs)

    @property
    def device(self) -> torch.device:  # where code that follows `x.device` sends its new tensors
        return torch.device("cuda")

    @property
    def is_cuda(self) -> bool:
        return True

    def numpy(self, *args, **kwargs):
        raise AssertionError("numpy() on a tensor that lives on the GPU: call .cpu() first (core.to_numpy)")

    def cpu(self, *args, **kwargs):
        return self.as_subclass(torch.Tensor)

    def __array__(self, *args, **kwargs):
        raise AssertionError("a GPU tensor turned into a numpy array without .cpu()")


LENIENT = {"__getitem__", "__setitem__", "index_select", "gather", "to", "copy_", "__get__", "__set__",
           "_has_compatible_shallow_copy_type"}  # CPU indices are fine


def _flat(node):
    if isinstance(node, (list, tuple)):
        for item in node:
            yield from _flat(item)
    elif isinstance(node, dict):
        for item in node.values():
            yield from _flat(item)
    else:
        yield node


def _is_gpu(device) -> bool:
    return device is not None and torch.device(device).type == "cuda"


def _target_device(args, kwargs):
    for value in (kwargs.get("device"), *args[:1]):
        if isinstance(value, (str, torch.device)):
            with contextlib.suppress(RuntimeError):
                return torch.device(value)
        if isinstance(value, torch.Tensor):
            return value.device if not isinstance(value, OnGpu) else torch.device("cuda")
    return None


@contextlib.contextmanager
def fake_gpu(monkeypatch):
    real_to = torch.Tensor.to

    def to(self, *args, **kwargs):
        target = _target_device(args, kwargs)
        if target is not None and target.type == "cuda":
            args = tuple("cpu" if isinstance(a, (str, torch.device)) and _is_gpu(a) else a for a in args)
            kwargs = {k: ("cpu" if k == "device" else v) for k, v in kwargs.items()}
            return real_to(self, *args, **kwargs).as_subclass(OnGpu)
        if target is not None and target.type == "cpu" and isinstance(self, OnGpu):
            return real_to(self.as_subclass(torch.Tensor), *args, **kwargs)
        return real_to(self, *args, **kwargs)

    monkeypatch.setattr(torch.Tensor, "to", to)
    monkeypatch.setattr(torch.__future__, "get_overwrite_module_params_on_conversion", lambda: True)
    monkeypatch.setattr(torch.Tensor, "cuda", lambda self, *a, **k: self.as_subclass(OnGpu))
    for name in FACTORIES:
        real = getattr(torch, name)

        @functools.wraps(real)
        def factory(*args, _real=real, **kwargs):
            if _is_gpu(kwargs.get("device")):
                kwargs["device"] = "cpu"
                return _real(*args, **kwargs).as_subclass(OnGpu)
            return _real(*args, **kwargs)

        monkeypatch.setattr(torch, name, factory)
    yield
