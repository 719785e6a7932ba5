"""Streamed multipart uploads: each chunk is hashed, counted and written to a temporary file as it
arrives, so neither the hash nor the size cap ever needs the whole file in memory."""

from __future__ import annotations

import hashlib
import re
import tempfile
import unicodedata
from typing import IO, Any

import magic
from django.core.files.uploadedfile import UploadedFile
from django.core.files.uploadhandler import FileUploadHandler

from shared.api.errors import PayloadTooLarge, ValidationFailed

SNIFF_BYTES = 64 * 1024
UNSAFE_CHARS = re.compile(r'[\x00-\x1f\x7f<>:"/\\|?*]')


class HashedUpload(UploadedFile):
    """An uploaded file in a temporary file, with the SHA-256 and size of exactly its bytes."""

    def __init__(self, *, file: IO[bytes], name: str, size: int, sha256: str) -> None:
        super().__init__(file=file, name=name, content_type=None, size=size)
        self.temp = file
        self.length = size
        self.sha256 = sha256

    @classmethod
    def from_bytes(cls, content: bytes, *, name: str) -> HashedUpload:
        """For content the service makes itself (generated documents) rather than receives."""
        temp = tempfile.NamedTemporaryFile(prefix="vault-upload-")  # noqa: SIM115 - closed with the upload
        temp.write(content)
        temp.flush()
        temp.seek(0)
        return cls(file=temp, name=name, size=len(content), sha256=hashlib.sha256(content).hexdigest())

    def detected_type(self) -> str:
        """The MIME type libmagic reads from the bytes; the client's declared type is never used."""
        self.temp.seek(0)
        head = self.temp.read(SNIFF_BYTES)
        self.temp.seek(0)
        if not head:
            return "application/octet-stream"
        return magic.from_buffer(head, mime=True) or "application/octet-stream"


class HashingUploadHandler(FileUploadHandler):
    """Takes every file part of the request (the view accepts one, named `file`)."""

    def __init__(self, request: Any = None, *, max_bytes: int) -> None:
        super().__init__(request)
        self.max_bytes = max_bytes

    def handle_raw_input(
        self, input_data: Any, META: Any, content_length: int, boundary: Any, encoding: Any = None
    ) -> None:  # noqa: N803
        # The body holds the file plus a little multipart framing: refuse at once what cannot fit.
        if content_length and content_length > self.max_bytes + 64 * 1024:
            raise too_large(self.max_bytes)

    def new_file(self, *args: Any, **kwargs: Any) -> None:
        super().new_file(*args, **kwargs)
        self.digest = hashlib.sha256()
        self.size = 0
        self.temp = tempfile.NamedTemporaryFile(prefix="vault-upload-")  # noqa: SIM115 - closed with the upload

    def receive_data_chunk(self, raw_data: bytes, start: int) -> None:
        self.size += len(raw_data)
        if self.size > self.max_bytes:
            self.temp.close()
            raise too_large(self.max_bytes)
        self.digest.update(raw_data)
        self.temp.write(raw_data)

    def file_complete(self, file_size: int) -> HashedUpload:
        self.temp.flush()
        self.temp.seek(0)
        return HashedUpload(
            file=self.temp, name=self.file_name or "", size=self.size, sha256=self.digest.hexdigest()
        )


def too_large(max_bytes: int) -> PayloadTooLarge:
    return PayloadTooLarge(f"The file is larger than the upload limit of {max_bytes} bytes.", field="file")


def sanitize_filename(raw: str) -> str:
    """The last path component of what the client sent, without control or path characters, at
    most 255 characters with its extension kept; never empty, never a dot-name."""
    name = unicodedata.normalize("NFC", raw or "").replace("\\", "/")
    name = name.rsplit("/", 1)[-1]
    name = UNSAFE_CHARS.sub("_", name)
    name = " ".join(name.split()).strip(" .")
    if not name:
        return "document"
    if len(name) > 255:
        stem, dot, ext = name.rpartition(".")
        keep = ext[:20] if dot and stem else ""
        name = (name[: 255 - len(keep) - 1] + "." + keep) if keep else name[:255]
    return name


def require_upload(files: Any) -> HashedUpload:
    upload = files.get("file")
    if not isinstance(upload, HashedUpload):
        raise ValidationFailed("file is required (a multipart form field named file)", field="file")
    return upload
