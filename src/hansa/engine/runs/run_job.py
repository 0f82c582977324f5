"""The run job: one worker drives a run, group by group, in as few transactions as it can.

The job (kind ``run``, keyed ``run:<id>``, so one worker at a time drives a run)
loops over *steps*. Each step is one transaction guarded by the job's lease:

1. record the outcomes of the executions that ended since the last step —
   ``completed`` with the result, ``failed`` with a plain reason, or back to
   ``open`` for another attempt of a reversible task after a temporary problem;
2. recover tasks left ``in_progress`` by a worker that died: a reversible one runs
   again; an irreversible one becomes ``ambiguous`` and goes back to the user,
   never repeated (its ``in_progress`` row was the intent, committed before the call);
3. let the scheduler decide what starts now; re-check the laws for each such task
   (with earlier results filled in) and move it to ``in_progress``;
4. when nothing runs and nothing waits for a retry, finish the job.

Between steps the executors run concurrently, outside any transaction. Outcomes
that end together are recorded together, so a group of quick tasks costs one
transaction to start and one to finish, whatever its size.
"""

from __future__ import annotations

import asyncio
import random
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import Connection

from hansa import errors, tracing
from hansa.bus.base import Subscription
from hansa.domain import event, message, run
from hansa.domain.job import Job, JobKind, RunJob, payload
from hansa.domain.llm_call import LlmCall
from hansa.engine import laws, llm, templates
from hansa.engine.runs import graph_steps, loops, scheduler
from hansa.engine.runs.change import RunChange
from hansa.engine.runs.connectors import secret_box
from hansa.engine.runs.invoke import Outcome, Started, invoke
from hansa.engine.runs.judge import Judge, Judged, UnknownAgent
from hansa.engine.runs.scheduler import Book
from hansa.engine.runtime.faults import crash_point
from hansa.engine.runtime.recorder import Batch, Recorder
from hansa.engine.runtime.services import Services
from hansa.store import events, llm_calls, queue, runs
from hansa.tasks.base import Flow, TaskFailed

_INTERRUPTED = "the step was interrupted too many times"
CUT = "cut"
"""The failure code of an execution cut by a preempt or a cancel."""
CONTROL_WAIT_SECONDS = 60.0
"""How long one look at the log for control events waits before looking again."""


async def run_run_job(services: Services, claimed: Job) -> None:
    """Drive the run a job stands for until nothing of it can run now."""
    await RunDriver(services, claimed).drive()


def hand_over(change: RunChange, claimed: Job) -> None:
    """Start the run's first tasks in the transaction that hands its job to this process's
    worker (an approval, say); once it commits, the worker drives the run from there.

    The same first step the job would take, one transaction earlier; if this process dies
    after the commit, the job's lease expires and the tasks are recovered as after any crash.
    """
    driver = RunDriver(change.services, claimed)
    driver.first_step(change)
    worker = change.services.local_worker
    assert worker is not None, "only this process's worker is handed run jobs"
    change.batch.after_commit(lambda: worker.adopt(claimed, driver.drive))


class RunDriver:
    """Drives one run for one claimed run job: steps, executions, their outcomes."""

    def __init__(self, services: Services, claimed: Job) -> None:
        work = RunJob.model_validate(claimed.payload)
        self.services = services
        self.job = claimed
        self.tenant_id = claimed.tenant_id
        self.run_id = work.run_id
        self.conversation_id = work.conversation_id
        self.recorder = Recorder(services, self.tenant_id, self.conversation_id, claimed)
        self.running: dict[str, asyncio.Task[Outcome]] = {}
        self.held: dict[str, datetime] = {}
        """Tasks waiting to be retried, and from when (their ``scheduled_at``, as last seen)."""
        self.seen: tuple[datetime, list[run.Task]] | None = None
        """The run's ``updated_at`` after this job's last step, and its tasks then."""
        self.ready: list[Started] = []
        """Tasks started for this job before it began (see ``hand_over``)."""
        self.tasks: dict[str, run.Task] = {}
        """The running tasks, as they were started."""
        self.spent: dict[str, list[LlmCall]] = {}
        """The model calls of the running tasks' executions so far (a cut one's too)."""
        self.control: Subscription
        """The conversation's bus subscription while the job drives (see ``_wait``)."""
        self.seen_seq = 0
        """The newest event of the conversation this job has seen or written."""

    def first_step(self, change: RunChange) -> None:
        """Open the run and start its first tasks in ``change``'s transaction."""
        r, book = self._open(change)
        if r.status is run.RunStatus.RUNNING:
            self.ready = self._start_next(book, r)
        self.held = book.held()
        self.seen = (change.now, list(book.tasks.values()))

    async def drive(self) -> None:
        """Step, execute and record until nothing of the run can run now (its tasks' spans
        under one ``hansa.run`` span)."""
        with tracing.run(self.run_id, self.conversation_id):
            await self._drive()

    async def _drive(self) -> None:
        outcomes: list[Outcome] = []
        started, self.ready = self.ready, []
        settings = self.services.settings
        self.control = self.services.bus.subscribe(self.conversation_id)
        try:
            while True:
                if not started:
                    started, ended = await self._step(outcomes)
                    if ended:
                        return
                if started:
                    crash_point(settings, "task.before_execute")
                for s in started:
                    self.tasks[s.task.id] = s.task
                    self.spent[s.task.id] = s.calls
                    self.running[s.task.id] = asyncio.create_task(
                        invoke(self.services, self.tenant_id, s), name=f"task {s.task.id}"
                    )
                started = []
                outcomes = await self._wait()
                if outcomes:
                    crash_point(settings, "task.after_execute")
        finally:
            self.control.close()
            for execution in self.running.values():
                execution.cancel()
            if self.running:  # cut with the job (its lease lost, the worker stopping)
                await asyncio.gather(*self.running.values(), return_exceptions=True)
                cut = [c for tid in self.running for c in self.spent.get(tid, [])]
                await llm.keep(self.services.db, cut)

    async def _wait(self) -> list[Outcome]:
        """The outcomes of the executions that end next (or none, when a retry is due).

        Meanwhile it watches the conversation's log: a preempted task or a cancelled run
        has its executions cut at once (a reversible task's only: an irreversible call
        is never cut off midway), so a model call stops streaming and spending.
        """
        timeout = None
        if self.held:
            due = min(self.held.values()) - self.services.clock()
            timeout = max(0.0, due.total_seconds())
        if not self.running:
            await asyncio.sleep(timeout or 0)
            return []
        deadline = None if timeout is None else asyncio.get_running_loop().time() + timeout
        while not any(execution.done() for execution in self.running.values()):
            left = None if deadline is None else deadline - asyncio.get_running_loop().time()
            if left is not None and left <= 0:
                break
            watch = asyncio.ensure_future(self.control.wait(CONTROL_WAIT_SECONDS))
            await asyncio.wait(
                [*self.running.values(), watch], timeout=left, return_when=asyncio.FIRST_COMPLETED
            )
            rung = watch.done() and watch.result()
            watch.cancel()
            if rung:
                await self._cut(self.control.take(self.seen_seq))
        ended = [tid for tid, execution in self.running.items() if execution.done()]
        return [self._outcome(tid, self.running.pop(tid)) for tid in ended]

    def _outcome(self, task_id: str, execution: asyncio.Task[Outcome]) -> Outcome:
        task = self.tasks.pop(task_id)
        calls = self.spent.pop(task_id, [])
        if execution.cancelled():  # cut by a preempt or a cancel: its result is set aside
            batch = Batch(self.conversation_id, None, run_id=self.run_id)
            stopped = TaskFailed("stopped by the user", code=CUT)
            return Outcome(task, batch, calls=calls, failure=stopped)
        return execution.result()

    async def _cut(self, news: list[event.Event] | None) -> None:
        """Cancel the executions of tasks that control events took away from this run."""
        if news is None:  # the bus had no copy of the events: read the log
            news = await self.services.db.read(self._log_after, self.seen_seq)
        if news:
            self.seen_seq = news[-1].seq
        stopped: set[str] = set()
        for ev in news:
            if ev.run_id != self.run_id:
                continue
            data = ev.payload
            if isinstance(data, event.RunStatusData) and data.status is run.RunStatus.CANCELLED:
                stopped |= set(self.running)
            elif isinstance(data, event.TaskStatusData) and data.status is run.TaskStatus.CANCELLED:
                stopped.add(str(ev.task_id))
        for task_id in stopped & set(self.running):
            if self.tasks[task_id].is_reversible_by_system:
                self.running[task_id].cancel()

    def _log_after(self, conn: Connection, after: int) -> list[event.Event]:
        found: list[event.Event] = []
        while True:
            page = events.read_after(conn, self.tenant_id, self.conversation_id, after)
            found += page
            if len(page) < events.PAGE:
                return found
            after = page[-1].seq

    async def _step(self, outcomes: list[Outcome]) -> tuple[list[Started], bool]:
        batch = Batch(self.conversation_id, None, run_id=self.run_id)
        later = batch.then(lambda conn: self._decide(conn, batch, outcomes))
        stored = await self.recorder.write(batch)
        stepped = later.value
        for tid in stepped.stopped:
            self.running[tid].cancel()
        if stored:
            self.seen_seq = max(self.seen_seq, stored[-1].seq)  # its own events are no news
        self.seen = stepped.seen  # committed: what this job wrote is what the next step finds
        return stepped.started, stepped.ended

    def _decide(self, conn: Connection, batch: Batch, outcomes: list[Outcome]) -> _Stepped:
        """One step's transaction: record ``outcomes``, recover, start what may start."""
        change = RunChange.of(self.services, conn, self.tenant_id, self.run_id, batch)
        r, book = self._open(change)
        for outcome in outcomes:
            self._record(book, outcome)
        if any(outcome.changes for outcome in outcomes):
            # a handoff a step asked for paused the conversation's runs, this one among them
            r = runs.get(conn, self.tenant_id, self.run_id)
        self._recover(book)
        started: list[Started] = []
        if r.status is run.RunStatus.RUNNING:
            started = self._start_next(book, r)
            self.held = book.held()  # kept in the store: a backoff outlives this worker
        else:
            self.held = {}  # resuming queues a new run job, which starts them
        ended = False
        if not self.running and not started and not self.held:
            queue.finish(conn, self.job, change.now)
            ended = True
        elif not self.running and not started:
            ended = self._hand_wait_to_queue(change)
        stopped = [  # a branch that lost a race or ran out of time: cut it
            tid
            for tid in self.running
            if book.tasks[tid].status is not run.TaskStatus.IN_PROGRESS
            and self.tasks[tid].is_reversible_by_system
        ]
        return _Stepped(started, ended, (change.now, list(book.tasks.values())), stopped)

    def _hand_wait_to_queue(self, change: RunChange) -> bool:
        """Nothing runs and the next due task is far off: end this job and queue the run's
        next one for then, so a waiting run holds no worker."""
        due = min(self.held.values())
        if due - change.now <= graph_steps.HOLD_IN_PLACE:
            return False
        queue.finish(change.conn, self.job, change.now)
        work = payload(RunJob(run_id=self.run_id, conversation_id=self.conversation_id))
        key = f"run:{self.run_id}"
        queue.enqueue(
            change.conn, self.tenant_id, JobKind.RUN, work, change.now, key=key, run_at=due
        )
        self.held.clear()
        return True

    def _open(self, change: RunChange) -> tuple[run.Run, Book]:
        """Lock the run; its tasks as this job left them, or read again if anyone else wrote."""
        conn = change.conn
        if self.seen is not None:
            stamp, tasks = self.seen
            r = runs.locked_if_untouched(conn, self.run_id, stamp, change.now)
            if r is not None:
                return r, Book(change, tasks)
        r = runs.locked(conn, self.run_id, change.now)
        return r, Book(change, runs.tasks_of(conn, self.run_id))

    def _start_next(self, book: Book, r: run.Run) -> list[Started]:
        started: list[Started] = []
        judge = Judge(self.services, book.change.conn, self.tenant_id)
        # a task refused at the last check fails, which may end its group: decide again
        for _ in range(len(book.tasks) + 1):
            busy = len(self.running) + len(started)
            chosen = scheduler.next_tasks(book, r, busy=busy)
            refused = False
            for task in chosen:
                s = self._start(book, r, task, judge)
                refused = refused or s is None
                if s is not None:
                    started.append(s)
            if not refused:
                break
        return started

    def _start(self, book: Book, r: run.Run, task: run.Task, judge: Judge) -> Started | None:
        """Start a task the scheduler chose: judged again with its parameters filled in,
        then held, settled or moved to ``in_progress``, as its type says (never its name)."""
        try:
            judge.agent(task.created_by)
        except UnknownAgent as exc:  # a registered agent removed meanwhile
            self._fail(book, task, exc.message)
            return None
        looped = loops.body_result(book, task) if Flow.LOOP in book.flows else None
        if looped is not None:  # a loop's body: done once its copies are
            book.move(task.id, run.TaskStatus.IN_PROGRESS, attempt=True)
            book.move(task.id, run.TaskStatus.COMPLETED, result=looped, announce=True)
            return None
        outputs = book.outputs()
        judged = self._judge(book, r, task, judge, outputs)
        if judged is None:
            return None
        verdict = judged.verdict
        if not verdict.reversible and task.confirmed_hash != task.parameters_hash:
            book.move(task.id, run.TaskStatus.AWAITING_CONFIRMATION, announce=True)
            return None
        checked, kind = verdict.params, self.services.registry.get(task.task_type)
        assert checked is not None
        if kind.hold is not None and not task.attempts:  # held first, durably; then it runs
            graph_steps.hold(book, task, kind.hold(checked))
            return None
        moved = book.move(task.id, run.TaskStatus.IN_PROGRESS, attempt=True, announce=True)
        if kind.settle is not None and graph_steps.settle(book, task, kind.settle, checked):
            return None  # decided in this transaction, never executed
        if task.node_id is None:  # a plan's step (a graph's node has its task_status per node)
            _think(book, task, f"{judged.agent.display_name} is working on: {_what(task)}")
        # what Hans's review checks a model's writing against (only a step it reviews)
        grounds = judge.grounds(r, book.tasks.values(), judged.project) if kind.check else ()
        return Started(moved, kind, checked, judged.project, outputs, grounds=grounds)

    def _judge(
        self,
        book: Book,
        r: run.Run,
        task: run.Task,
        judge: Judge,
        outputs: dict[str, dict[str, Any]],
    ) -> Judged | None:
        """The laws' verdict on the task with its parameters filled in (a plan's step refs
        from earlier results, a graph's node templates from its scope); None when refused
        (the task failed)."""
        try:
            opened = secret_box(self.services).open(task.parameters)
            if task.node_id is None:
                params = laws.resolve_refs(opened, outputs)
            else:
                scope = graph_steps.scope(book, r, task, outputs)
                limit = self.services.settings.max_node_params_bytes
                params = templates.render_value(opened, scope, max_bytes=limit)
            judged = judge.task(task.task_type, params, task.created_by, task.project_id)
            judged.verdict.raise_for_refusal()
        except errors.UserError as exc:
            self._fail(book, task, exc.message)
            return None
        except (ValueError, TypeError, RecursionError) as exc:  # bad data, not a bad job
            self._fail(book, task, f"its parameters could not be filled in: {exc}")
            return None
        return judged

    def _record(self, book: Book, outcome: Outcome) -> None:
        change = book.change
        for call in outcome.calls:
            llm_calls.record(change.conn, call)
        change.batch.items.extend(outcome.batch.items)
        task = book.tasks[outcome.task.id]
        if task.status is not run.TaskStatus.IN_PROGRESS:  # preempted meanwhile
            _think(book, task, "A preempted step finished; its result is set aside")
            return
        failure = outcome.failure
        if failure is not None and failure.code == CUT:  # its run was cancelled meanwhile
            book.move(task.id, run.TaskStatus.CANCELLED, error=failure.message, announce=True)
            return
        if failure is None and outcome.changes:  # what it asked of the conversation
            refused = graph_steps.change_conversation(book, outcome.changes)
            if refused is not None:
                self._fail(book, task, refused, code="invalid_transition")
                return
        if failure is None:
            book.move(task.id, run.TaskStatus.COMPLETED, result=outcome.result, announce=True)
            return
        if not self._retryable(outcome):
            self._fail(book, task, failure.message, code=failure.code)
            return
        delay = min(30.0, 0.5 * 2 ** (task.attempts - 1)) * random.uniform(0.8, 1.2)
        retry_at = change.now + timedelta(seconds=delay)
        book.move(
            task.id, run.TaskStatus.OPEN, error=failure.message, not_before=retry_at, announce=True
        )
        _think(book, task, f"Retrying {_what(task)} after a temporary problem ({failure.code})")

    def _retryable(self, outcome: Outcome) -> bool:
        task, failure = outcome.task, outcome.failure
        return (
            failure is not None
            and failure.retryable
            and self.services.registry.get(task.task_type).retryable
            and task.is_reversible_by_system
            and task.attempts < self.services.settings.task_max_attempts
        )

    def _recover(self, book: Book) -> None:
        """Tasks ``in_progress`` that no execution of this job runs: their worker died."""
        for task in list(book.tasks.values()):
            if task.status is not run.TaskStatus.IN_PROGRESS or task.id in self.running:
                continue
            if self.job.attempts > self.job.max_attempts:
                self._fail(book, task, _INTERRUPTED)
            elif not task.is_reversible_by_system:
                # the irreversible call may have happened: ask, never repeat
                unknown = "the outcome of this irreversible step is unknown"
                book.move(task.id, run.TaskStatus.AMBIGUOUS, error=unknown, announce=True)
            else:
                book.move(task.id, run.TaskStatus.OPEN, announce=True)
                _think(book, task, f"This step was interrupted and runs again: {_what(task)}")

    def _fail(self, book: Book, task: run.Task, message: str, *, code: str = "refused") -> None:
        if book.tasks[task.id].status is run.TaskStatus.OPEN:
            book.move(task.id, run.TaskStatus.IN_PROGRESS, attempt=True)
        error = {"error": {"code": code, "message": message}}
        book.move(task.id, run.TaskStatus.FAILED, error=message, result=error, announce=True)
        _think(book, task, f"Marking {_what(task)} as failed ({code})")


@dataclass(frozen=True)
class _Stepped:
    """What one step's transaction decided, read once it committed."""

    started: list[Started]
    """The tasks it moved to ``in_progress``, for this job to execute."""
    ended: bool
    """Whether it finished the job (nothing runs, nothing is held here any more)."""
    seen: tuple[datetime, list[run.Task]]
    """The run's tasks as it left them, and when (``RunDriver.seen``)."""
    stopped: list[str]
    """Running tasks it took away (a branch that lost a race or timed out): cut them."""


def _what(task: run.Task) -> str:
    """A step as thinking names it: its type and its place, never its summary or its
    outcome's text (a model or an outside system may have written those: seed 000 §17.6)."""
    kind = task.task_type.replace("_", " ")
    return f"{kind} ({task.node_id})" if task.node_id else f"{kind} (group {task.step_group})"


def _think(book: Book, task: run.Task, text: str) -> None:
    """A thinking entry about ``task``, in its group, by its owner."""
    book.change.batch.thinking(
        text, agent_id=task.created_by, phase=message.Phase.EXECUTION, group=task.step_group
    )
