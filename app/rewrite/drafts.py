"""Several drafts developing at once: which one leads, and how settled each word is.

No Qt here: the model thread (``app.rewrite.worker``) picks the leading draft for the span from each
:class:`~model.Pass`, and the drafts panel (``app.rewrite.drafts_panel``) shades words with :func:`hesitation`.
Both read only what the one sampler loop yields (``Pass.accepted``, ``Pass.entropy``); nothing is
recomputed or forked for the display.
"""

from __future__ import annotations

from model import Pass

# A word whose slots' entropy reaches this many nats shows fully shaded (about e^2.5 = 12 equally likely
# tokens); at or below ``SETTLED_NATS`` it is plain ink. The built-in model's accepted tokens mostly sit
# between 0 and 3 nats; noise slots are far above.
SETTLED_NATS = 0.25
HESITANT_NATS = 2.5


def accepted_share(step: Pass, candidate: int) -> float:
    """The share of the candidate's slots in this block that the sampler has accepted."""
    accepted = step.accepted[candidate]
    return sum(accepted) / len(accepted) if accepted else 1.0


def mean_entropy(step: Pass, candidate: int) -> float:
    entropy = step.entropy[candidate]
    return sum(entropy) / len(entropy) if entropy else 0.0


def leading_candidate(step: Pass, current: int | None = None) -> int:
    """The draft the span shows while several develop: the one with the largest share of accepted slots,
    the surer (lower mean entropy) on a tie. The current leader stays until another strictly passes it,
    so the span does not flick between drafts that are level."""
    count = len(step.accepted)
    best = max(range(count), key=lambda c: (accepted_share(step, c), -mean_entropy(step, c)))
    if current is not None and 0 <= current < count and accepted_share(step, current) >= accepted_share(step, best):
        return current
    return best


def readable(step: Pass, candidate: int) -> bool:
    """Whether a draft reads as text: at least half of its slots are accepted (the bench's measure)."""
    return accepted_share(step, candidate) >= 0.5


def hesitation(entropy: float | None) -> float:
    """How unsettled a word is, 0 (sure) to 1 (hesitant), from its entropy in nats; 0 where unknown."""
    if entropy is None:
        return 0.0
    return min(1.0, max(0.0, (entropy - SETTLED_NATS) / (HESITANT_NATS - SETTLED_NATS)))
