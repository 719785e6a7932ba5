"""kombu's filesystem transport (the embedded default's broker) with messages that appear whole and
are claimed by exactly one consumer.

kombu's own transport creates a message file under its final name and then writes it; a worker
polling the folder in between moved the still-empty file away, failed to parse it and stopped
("Unrecoverable error: JSONDecodeError"), and the message was lost. Once workers polled often
enough to keep up with 20 jobs a second (shared.conf.FILESYSTEM_BROKER_POLL_SECONDS) that happened
within seconds. A message is now written under a name no consumer reads (`.part`) and renamed into
place, which is atomic within one folder.

A consumer claims a message by renaming it into the processed folder (beside the queue folder, so
also atomic: of two consumers one wins, the other skips it). kombu moved it to the system's
temporary folder instead, which on another filesystem is a copy, and two consumers could both take
the copy. Names start with the enqueue time, so that the folder's name order is the enqueue order:
in nanoseconds (kombu's milliseconds left messages sent within one in random order), zero-padded
(the order holds when the number grows a digit), and from the wall clock rather than kombu's time
since boot (messages still queued across a restart of the machine keep their place).
"""

from __future__ import annotations

import os
import uuid
from queue import Empty
from time import time_ns
from typing import Any

from kombu.exceptions import ChannelError
from kombu.transport import filesystem
from kombu.utils.encoding import bytes_to_str, str_to_bytes
from kombu.utils.json import dumps, loads


class Channel(filesystem.Channel):
    # kombu's two base classes name the message argument differently (`message`, `payload`).
    def _put(self, queue: str, payload: Any, **kwargs: Any) -> None:  # type: ignore[override]
        name = f"{time_ns():020d}_{uuid.uuid4()}.{queue}.msg"
        final = os.path.join(self.data_folder_out, name)
        partial = f"{final}.part"  # ends in neither `.msg` nor `<queue>.msg`: never read
        try:
            with open(partial, "wb") as file:
                file.write(str_to_bytes(dumps(payload)))
            os.rename(partial, final)
        except OSError as exc:
            raise ChannelError(f"Cannot add file {final!r} to directory") from exc

    def _get(self, queue: str, timeout: float | None = None) -> Any:
        wanted = f"{queue}.msg"
        for name in sorted(os.listdir(self.data_folder_in)):
            if name.partition(".")[2] != wanted:
                continue
            claimed = os.path.join(self.processed_folder, name)
            try:
                os.rename(os.path.join(self.data_folder_in, name), claimed)
            except OSError:  # another consumer claimed it first
                continue
            try:
                with open(claimed, "rb") as file:
                    payload = file.read()
                if not self.store_processed:
                    os.remove(claimed)
            except OSError as exc:
                raise ChannelError(f"Cannot read file {claimed!r} from queue.") from exc
            return loads(bytes_to_str(payload))
        raise Empty()


class Transport(filesystem.Transport):
    Channel = Channel
