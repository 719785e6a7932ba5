"""The compressed container around the tar stream: written with fixed framing, read with every byte
of the file accounted for.

Python's streaming tar reader stops at the tar's end marker and never reads the compressor's
trailer, and nothing checks a gzip header's time stamp or flags; so a flipped byte there passed
verification. Here the file is decompressed by us, to its very end:

- the header must be exactly the one `HEADERS` names (no name, time stamp 0, fixed flags), so
  every header byte is checked by comparison;
- the compressed data and the trailer are checked by the format itself (gzip: CRC-32 and length
  of the data; bzip2: a CRC per block and one for the stream; xz: CRC-64 per block, CRC-32 on the
  header, index and footer);
- no byte may follow the end of the compressed stream.
"""

from __future__ import annotations

import bz2
import gzip
import io
import lzma
import zlib
from typing import IO, Any

from shared.backup.errors import Damaged

CHUNK = 1024 * 1024
HEADERS = {  # each format's whole header as backups write it
    "gzip": b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x02\xff",  # deflate, no flags, time 0, level 9, OS unknown
    "bzip2": b"BZh9",
    "xz": b"\xfd7zXZ\x00\x00\x04\xe6\xd6\xb4F",  # stream flags: CRC-64 checks, and their CRC-32
}
MAGIC = {"gzip": b"\x1f\x8b", "bzip2": b"BZh", "xz": b"\xfd7zXZ\x00"}
# zlib's words for a gzip trailer that does not match the data, in the operator's.
_ZLIB_REASONS = {
    "incorrect data check": "the gzip trailer's CRC-32 does not match the data",
    "incorrect length check": "the gzip trailer's length (ISIZE) does not match the data",
    "incorrect header check": "the gzip header is not valid",
}


def compressed_writer(raw: IO[bytes], compression: str) -> io.BufferedIOBase:
    """A writer whose output starts with exactly `HEADERS[compression]`."""
    if compression == "gzip":
        return gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=0, compresslevel=9)
    if compression == "bzip2":
        return bz2.BZ2File(raw, "wb", compresslevel=9)
    return lzma.LZMAFile(raw, "wb", check=lzma.CHECK_CRC64)


class CheckedStream(io.RawIOBase):
    """The decompressed bytes of a file. Damage anywhere in the container raises `Damaged` by the
    time the stream has been read to its end (`drain`)."""

    def __init__(self, raw: IO[bytes]) -> None:
        self.raw = raw
        start = raw.read(len(HEADERS["xz"]))
        found = next((name for name, magic in MAGIC.items() if start.startswith(magic)), None)
        if found is None:
            raise Damaged("not a backup archive: the file is not gzip, bzip2 or xz compressed")
        self.compression = found
        # Archives written before the fixed framing (format 1) have other header bytes; the reader
        # checks this once it knows the archive's format version.
        self.canonical_header = start.startswith(HEADERS[found])
        self._decompressor: Any = _decompressor(found)
        self._input, self._ended = start, False

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        data = self._next(len(buffer))
        buffer[: len(data)] = data
        return len(data)

    def _next(self, size: int) -> bytes:
        while not self._ended:
            if self._decompressor.eof:
                self._end()
                break
            out = self._decompress(size)
            if out:
                return out
            if not self._input and not self._decompressor.eof:
                self._input = self.raw.read(CHUNK)
                if not self._input:
                    raise Damaged("damaged or truncated: the compressed data ends before its end marker")
        return b""

    def _decompress(self, size: int) -> bytes:
        try:
            if self.compression == "gzip":  # zlib keeps input it did not use in unconsumed_tail
                out: bytes = self._decompressor.decompress(self._input, size)
                self._input = self._decompressor.unconsumed_tail
            else:
                out = self._decompressor.decompress(self._input, max_length=size)
                self._input = b""
        except zlib.error as exc:
            reason = next((text for key, text in _ZLIB_REASONS.items() if key in str(exc)), str(exc))
            raise Damaged(f"damaged or truncated: {reason}") from None
        except (OSError, lzma.LZMAError, EOFError, ValueError) as exc:
            raise Damaged(f"damaged or truncated: the {self.compression} data is not valid ({exc})") from None
        return out

    def _end(self) -> None:
        self._ended = True
        if self._decompressor.unused_data or self._input or self.raw.read(1):
            raise Damaged(f"damaged: bytes follow the end of the {self.compression} stream")

    def drain(self) -> None:
        """Reads to the end (after the tar's end marker only zero padding may remain), so the
        trailer's checks run."""
        while chunk := self.read(CHUNK):
            if chunk.strip(b"\0"):
                raise Damaged("damaged: data follows the tar archive's end marker")


def _decompressor(compression: str) -> Any:
    if compression == "gzip":
        return zlib.decompressobj(wbits=16 + zlib.MAX_WBITS)  # gzip framing: zlib checks the trailer
    if compression == "bzip2":
        return bz2.BZ2Decompressor()
    return lzma.LZMADecompressor(format=lzma.FORMAT_XZ)
