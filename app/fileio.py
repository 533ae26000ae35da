"""Document reading and writing from where it used to live; the module is ``app/documents/fileio.py`` now."""

from app.documents.fileio import (
    BinaryFileError,
    FileError,
    TextDocument,
    UnknownEncodingError,
    decode_document,
    encode_document,
    read_document,
    save_document,
)

__all__ = [
    "BinaryFileError",
    "FileError",
    "TextDocument",
    "UnknownEncodingError",
    "decode_document",
    "encode_document",
    "read_document",
    "save_document",
]
