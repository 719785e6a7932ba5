"""The prefork pool's cancelled time-limit timers are swept from the worker's event loop timer
(shared.worker.drop_cancelled_timers): kombu keeps a cancelled entry in its heap until it is due."""

from kombu.asynchronous.timer import Timer

from shared.worker import drop_cancelled_timers


def test_cancelled_entries_are_dropped_and_live_ones_still_fire():
    timer = Timer()
    fired: list[object] = []
    due = [timer.call_after(0, fired.append, (n,)) for n in range(3)]
    later = timer.call_after(3600, fired.append, ("later",))
    for entry in (due[0], due[1], later):
        entry.cancel()
    kept = timer.call_after(7200, fired.append, ("kept",))

    assert drop_cancelled_timers(timer) == 3
    assert [item.entry for item in timer.queue] == [due[2], kept]
    assert drop_cancelled_timers(timer) == 0

    for _, entry in timer:  # what the event loop does: fire what is due, stop at the first wait
        if entry is None:
            break
        entry()
    assert fired == [2]
    assert [item.entry for item in timer.queue] == [kept]
