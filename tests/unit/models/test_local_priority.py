"""Background work on the embedded model waits while a foreground call is urgent."""

from __future__ import annotations

import threading
from collections.abc import Sequence

from hansa import errors
from hansa.engine import summarizer
from hansa.models import _local_priority
from hansa.models._local_priority import Urgency, yield_to
from hansa.models.base import RequestParams


def test_nothing_urgent_lets_background_work_go_at_once() -> None:
    assert Urgency().wait(timeout=0) is True


def test_an_urgent_call_holds_background_work_until_it_ends_once() -> None:
    urgency = Urgency()
    first = urgency.begin()
    second = urgency.begin()
    assert urgency.wait(timeout=0) is False

    first()
    first()  # ending twice ends one call, not the other
    assert urgency.urgent == 1 and urgency.wait(timeout=0) is False
    second()
    assert urgency.urgent == 0 and urgency.wait(timeout=0) is True


def test_a_waiting_background_thread_goes_on_when_the_call_ends() -> None:
    urgency = Urgency()
    end = urgency.begin()
    waited: list[bool] = []
    behind = threading.Thread(target=lambda: waited.append(urgency.wait(timeout=60)))
    behind.start()
    end()
    behind.join(60)
    assert waited == [True]


class _Context:
    """llama.cpp's context at its seam: what ``Llama.eval`` is handed, and whether a
    foreground call was urgent each time."""

    def __init__(self, urgency: Urgency) -> None:
        self.urgency = urgency
        self.chunks: list[list[int]] = []
        self.urgent_then: list[int] = []

    def eval(self, tokens: Sequence[int]) -> None:
        self.chunks.append(list(tokens))
        self.urgent_then.append(self.urgency.urgent)


def test_the_background_context_evaluates_in_chunks_each_after_the_foreground() -> None:
    urgency = Urgency()
    context = _Context(urgency)
    yield_to(context, urgency, chunk=4)  # type: ignore[arg-type]  # the seam's stand-in

    context.eval(list(range(10)))
    assert context.chunks == [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9]]

    end = urgency.begin()
    done = threading.Event()
    behind = threading.Thread(target=lambda: (context.eval(list(range(6))), done.set()))
    behind.start()
    assert not done.wait(timeout=0.2), "no chunk goes while a call is urgent"
    assert len(context.chunks) == 3
    end()
    behind.join(60)
    assert context.chunks[3:] == [[0, 1, 2, 3], [4, 5]]
    assert context.urgent_then == [0] * 5


def test_the_rolling_summary_is_a_background_purpose_and_a_reply_is_not() -> None:
    assert summarizer.PURPOSE in _local_priority.BACKGROUND_PURPOSES
    assert RequestParams().purpose not in _local_priority.BACKGROUND_PURPOSES


def test_closing_stops_background_work_at_its_next_chunk() -> None:
    urgency = Urgency()
    context = _Context(urgency)
    yield_to(context, urgency, chunk=4)  # type: ignore[arg-type]  # the seam's stand-in
    end = urgency.begin()
    failed: list[BaseException] = []

    def summarize() -> None:
        try:
            context.eval(list(range(8)))
        except errors.ProviderError as exc:
            failed.append(exc)

    behind = threading.Thread(target=summarize)
    behind.start()
    urgency.close()  # the model closes while a reply is urgent: no chunk waits it out
    behind.join(60)
    end()
    assert context.chunks == [] and len(failed) == 1
    assert "closing" in str(failed[0])
