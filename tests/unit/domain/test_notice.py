"""The sender id that notices carry: unique per process, even where PIDs repeat."""

from __future__ import annotations

import os

from hansa.domain import notice


def test_the_sender_is_not_the_pid_and_is_stable() -> None:
    assert notice.sender_id() != str(os.getpid())
    assert notice.sender_id() == notice.sender_id()


def test_a_forked_child_is_another_sender() -> None:
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child reports its sender id and exits at once
        os.write(write, notice.sender_id().encode())
        os._exit(0)
    os.close(write)
    child = os.read(read, 64).decode()
    os.waitpid(pid, 0)
    os.close(read)
    assert child and child != notice.sender_id()
