"""core.lab.exercises: the course's model with its weights, dropout with a given mask, and answer checking."""
import math

import numpy as np
import pytest
import torch
from course_numbers import B_1, B_2, B_K, B_O, B_Q, B_V, W_1, W_2, W_K, W_O, W_Q, W_V, X

from core.lab.exercises import SOURCE_TOKENS, course_model, dropout_with_mask, wrong_entries


def test_course_model_holds_the_course_weights_and_runs_in_eval_mode():
    model = course_model()
    assert not model.training and model.src_embed.embed.weight.dtype == torch.float64
    torch.testing.assert_close(model.src_embed.embed(torch.tensor(SOURCE_TOKENS)), X.double())
    attn, ff = model.encoder.layers[0].self_attn, model.encoder.layers[0].ff
    for linear, w, b in ((attn.q_proj, W_Q, B_Q), (attn.k_proj, W_K, B_K), (attn.v_proj, W_V, B_V),
                         (attn.out_proj, W_O, B_O), (ff.linear1, W_1, B_1), (ff.linear2, W_2, B_2)):
        assert linear.weight.tolist() == w and linear.bias.tolist() == b
    norm = model.encoder.layers[0].norm_self_attn
    assert norm.weight.tolist() == [1, 1] and norm.bias.tolist() == [0, 0]
    assert course_model(torch.float32).src_embed.embed.weight.dtype == torch.float32


def test_dropout_with_mask_is_what_nn_dropout_does_with_its_own_mask():
    x = torch.randn(4, 6, generator=torch.Generator().manual_seed(1), dtype=torch.float64)
    for p in (0.1, 0.5):
        torch.manual_seed(3)
        out = torch.nn.Dropout(p).train()(x)
        keep = (out != 0).double()
        assert 0 < keep.sum() < keep.numel()  # the draw really dropped something and kept something
        torch.testing.assert_close(dropout_with_mask(x, keep, p), out)
    torch.testing.assert_close(dropout_with_mask(x, torch.ones_like(x), 0.1), x / 0.9)
    with pytest.raises(ValueError):
        dropout_with_mask(x, torch.ones_like(x), 1.0)


def test_wrong_entries_names_the_entries_outside_the_tolerance():
    expected = np.array([[0.5, -0.25], [1.0, 2.0]])
    assert wrong_entries(expected, expected, 1e-3) == []
    answer = expected + np.array([[0.001, 0.0], [-0.0011, math.nan]])
    got = wrong_entries(answer, expected, 1e-3)
    assert [(i, j) for i, j, _ in got] == [(1, 0), (1, 1)]  # exactly 0.001 away is still right
    assert got[0][2] == pytest.approx(-0.0011) and math.isnan(got[1][2])
    with pytest.raises(ValueError):
        wrong_entries(np.zeros((2, 3)), expected, 1e-3)
