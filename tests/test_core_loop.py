"""core.loop: the chunked loop shared by core.train.Trainer and core.lab.classifier.ClassifierRun."""
import torch

from core.loop import adamw, chunks, seeded_dropout


def counter(limit: int):
    done = []
    return (lambda: done.append(len(done) + 1) or len(done)), (lambda: len(done) >= limit)


def test_chunks_stop_at_n_at_the_end_and_after_the_time():
    step, finished = counter(7)
    assert list(chunks(step, finished, n=3)) == [1, 2, 3]
    assert list(chunks(step, finished, n=0)) == []
    assert list(chunks(step, finished, seconds=0.0)) == [4]  # the time is up after one step
    assert list(chunks(step, finished)) == [5, 6, 7] and list(chunks(step, finished)) == []


def test_seeded_dropout_depends_on_seed_and_step_and_restores_the_global_generator():
    torch.manual_seed(5)
    expected = torch.rand(3)
    torch.manual_seed(5)
    with seeded_dropout(1, 10, 0.1):
        a = torch.rand(3)
    assert torch.equal(torch.rand(3), expected)  # the global generator went on as if nothing had drawn
    with seeded_dropout(1, 10, 0.1):
        assert torch.equal(torch.rand(3), a)
    with seeded_dropout(1, 11, 0.1):
        assert not torch.equal(torch.rand(3), a)
    torch.manual_seed(5)
    with seeded_dropout(1, 10, 0.0):  # no dropout: the global generator is untouched
        assert torch.equal(torch.rand(3), expected)


def test_adamw_decays_matrices_only():
    model = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.LayerNorm(4))
    groups = adamw(model, 1e-3, 0.01).param_groups
    assert [g["weight_decay"] for g in groups] == [0.01, 0.0]
    assert [p.dim() for p in groups[0]["params"]] == [2] and [p.dim() for p in groups[1]["params"]] == [1, 1, 1]


def test_trainer_and_classifier_run_share_the_loop():
    import inspect

    from core.lab.classifier import ClassifierRun
    from core.train import Trainer
    for cls in (Trainer, ClassifierRun):
        assert "chunks(" in inspect.getsource(cls.steps) and "seeded_dropout(" in inspect.getsource(cls._dropout_rng)
        assert "adamw(" in inspect.getsource(cls.__init__)
