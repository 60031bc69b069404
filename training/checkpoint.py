"""A training run's whole state, saved every so many steps so a run stopped part way resumes
where it stopped (issue 58: an epoch on two CPU cores outlasts a session).

training/train.py keeps only the last epoch's weights, which is enough on a GPU where an epoch
takes a minute; on two cores an epoch takes most of an hour, and a session that ends inside it
would lose it all. The checkpoint holds what the next step depends on: the weights that train
(the word embeddings stay the base's), AdamW's moments, the schedule's step, the epoch's batch
order and the step reached, the loss summed so far, and both random generators (the batch
order's and dropout's), so a resumed run takes the same steps as one that was never stopped.
It is written to a temporary file and renamed, so a run killed while writing leaves the last
whole checkpoint.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from pathlib import Path

import torch

from training.minilm import FROZEN

NAME = "checkpoint.pt"

Groups = list[tuple[str, list[int]]]


@dataclass
class Position:
    """Where a run stands: `epoch` and the next `step` of its `groups` (None: the epoch's order
    is still to be drawn), with the loss summed over the steps taken."""

    epoch: int
    step: int
    groups: Groups | None
    total: float


def save(
    folder: Path,
    position: Position,
    model: torch.nn.Module,
    optimizer: torch.optim.Optimizer,
    schedule: torch.optim.lr_scheduler.LRScheduler,
    rng: random.Random,
) -> None:
    state = {
        "position": position.__dict__,
        "model": {n: v for n, v in model.state_dict().items() if n not in FROZEN},
        "optimizer": optimizer.state_dict(),
        "schedule": schedule.state_dict(),
        "rng": rng.getstate(),
        "torch_rng": torch.get_rng_state(),
    }
    partial = folder / (NAME + ".partial")
    torch.save(state, partial)
    partial.replace(folder / NAME)


def within(resumed: Position | None) -> tuple[Groups | None, float, int]:
    """Where an epoch starts: a resumed run's saved batch order, loss so far and next step when
    it stopped inside the epoch, else no order drawn yet, no loss, step 0."""
    if resumed is not None and resumed.groups is not None:
        return resumed.groups, resumed.total, resumed.step
    return None, 0.0, 0


def due(every: int, step: int) -> bool:
    """Whether a checkpoint is due after `step` steps of an epoch, one every `every` (0: none
    asked for)."""
    return every > 0 and step % every == 0


def resume(
    folder: Path,
    model: torch.nn.Module,
    optimizer: torch.optim.Optimizer,
    schedule: torch.optim.lr_scheduler.LRScheduler,
    rng: random.Random,
) -> Position | None:
    """Restore the saved state into the run's objects; None where nothing was saved."""
    path = folder / NAME
    if not path.exists():
        return None
    state = torch.load(path, weights_only=False)
    model.load_state_dict(state["model"], strict=False)
    optimizer.load_state_dict(state["optimizer"])
    schedule.load_state_dict(state["schedule"])
    rng.setstate(state["rng"])
    torch.set_rng_state(state["torch_rng"])
    return Position(**state["position"])
