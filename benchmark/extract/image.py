"""Image files checked before their pixels are decoded, and decoded to 8-bit RGB.

Extraction reads PNG files. Before decoding, the header says what the file is and how large:
an empty file, a file that is no image, a JPEG (whatever its name) and an image of more than
:data:`MAX_PIXELS` pixels (a decompression bomb: a few kilobytes that decode to gigabytes) are
refused with an :class:`~benchmark.errors.InputError` naming the file. A 16-bit PNG is scaled to
8 bits (not wrapped), transparency is composed on white, grey images become RGB.
"""
from __future__ import annotations

import os
import struct
from pathlib import Path

import numpy as np

from benchmark.errors import InputError

#: the most pixels an image may have (the largest bundled render has 27 million); the environment
#: variable ``DIAGQA_MAX_PIXELS`` overrides it
MAX_PIXELS = 80_000_000

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
JPEG_MAGIC = b"\xff\xd8\xff"


def max_pixels() -> int:
    """:data:`MAX_PIXELS`, or ``$DIAGQA_MAX_PIXELS`` when set to a positive whole number."""
    raw = os.environ.get("DIAGQA_MAX_PIXELS", "")
    return int(raw) if raw.isdigit() and int(raw) > 0 else MAX_PIXELS


def png_size(data: bytes) -> tuple[int, int, int] | None:
    """(width, height, bit depth) from a PNG's header, or None when the bytes are no PNG.

    >>> png_size(PNG_MAGIC + struct.pack(">I4sIIBB", 13, b"IHDR", 640, 480, 16, 2))
    (640, 480, 16)
    >>> png_size(b"GIF89a") is None
    True
    """
    if not data.startswith(PNG_MAGIC) or len(data) < 26 or data[12:16] != b"IHDR":
        return None
    width, height = struct.unpack(">II", data[16:24])
    return width, height, data[24]


def jpeg_size(data: bytes) -> tuple[int, int] | None:
    """(width, height) from a JPEG's frame header, or None when none is found.

    >>> jpeg_size(JPEG_MAGIC[:2] + b"\\xff\\xc0" + struct.pack(">HBHH", 11, 8, 480, 640) + b"\\x03")
    (640, 480)
    """
    if not data.startswith(JPEG_MAGIC[:2]):
        return None
    i = 2
    while i + 4 <= len(data):
        if data[i] != 0xFF:
            i += 1
            continue
        marker = data[i + 1]
        if marker in (0xD8, 0x01) or 0xD0 <= marker <= 0xD7 or marker == 0xFF:
            i += 1 if marker == 0xFF else 2
            continue
        (length,) = struct.unpack(">H", data[i + 2:i + 4])
        if 0xC0 <= marker <= 0xCF and marker not in (0xC4, 0xC8, 0xCC):
            if i + 9 > len(data):
                return None
            height, width = struct.unpack(">HH", data[i + 5:i + 9])
            return width, height
        i += 2 + length
    return None


def describe(data: bytes) -> str:
    """What the bytes look like, in words, for messages about files that are not PNGs.

    >>> describe(b""), describe(JPEG_MAGIC + b"\\xe0"), describe(b"<svg xmlns=...")
    ('an empty file (0 bytes)', 'a JPEG image', 'an SVG drawing (text), not a raster image')
    """
    if not data:
        return "an empty file (0 bytes)"
    if data.startswith(JPEG_MAGIC):
        return "a JPEG image"
    if data.startswith(PNG_MAGIC):
        return "a PNG image"
    if data[:6] in (b"GIF87a", b"GIF89a"):
        return "a GIF image"
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "a WebP image"
    if data[:2] == b"BM":
        return "a BMP image"
    head = data[:256].lstrip().lower()
    if head.startswith(b"<svg") or (head.startswith(b"<?xml") and b"<svg" in data[:2048].lower()):
        return "an SVG drawing (text), not a raster image"
    if head.startswith(b"%pdf"):
        return "a PDF document"
    return "not an image (unknown format)"


def check_png(data: bytes, source: str, jpeg_ok: bool = False) -> tuple[int, int, int]:
    """(width, height, bit depth) of PNG bytes that may be decoded; InputError naming ``source`` if not.

    ``jpeg_ok`` lets a JPEG through too (for reading its text only; bit depth 8).

    >>> check_png(b"", "a.png")
    Traceback (most recent call last):
    ...
    benchmark.errors.InputError: a.png: an empty file (0 bytes), not a PNG image
    """
    size = png_size(data)
    if size is None and jpeg_ok and data.startswith(JPEG_MAGIC):
        found = jpeg_size(data)
        if found is None:
            raise InputError("a damaged JPEG (no frame header)", file=source)
        size = (*found, 8)
    if size is None:
        what = describe(data)
        if what == "a JPEG image":
            raise InputError("a JPEG image, not a PNG: its lossy compression blurs the flat colours and thin "
                             "lines extraction reads; export the diagram as PNG", file=source)
        if what == "a PNG image":
            raise InputError("a damaged PNG (no image header)", file=source)
        raise InputError(f"{what}, not a PNG image", file=source)
    width, height, depth = size
    limit = max_pixels()
    if width == 0 or height == 0:
        raise InputError(f"a PNG of {width}x{height} pixels has nothing to read", file=source)
    if width * height > limit:
        raise InputError(f"image of {width}x{height} = {width * height:,} pixels is larger than the limit of "
                         f"{limit:,} (set DIAGQA_MAX_PIXELS to raise it)", file=source)
    return size


def decode_rgb(data: bytes, source: str = "<image>", jpeg_ok: bool = False) -> np.ndarray:
    """PNG bytes as an H x W x 3 uint8 RGB array (checked first: see :func:`check_png`)."""
    import cv2

    check_png(data, source, jpeg_ok)
    img = cv2.imdecode(np.frombuffer(data, dtype=np.uint8), cv2.IMREAD_UNCHANGED)
    if img is None or img.size == 0:
        raise InputError("a damaged PNG: its pixels cannot be decoded", file=source)
    return to_rgb8(img)


def to_rgb8(img: np.ndarray) -> np.ndarray:
    """An image as OpenCV decodes it (BGR/BGRA/grey, 8 or 16 bits) as 8-bit RGB on white.

    >>> to_rgb8(np.array([[[65535, 0, 257]]], np.uint16)).tolist()   # 16-bit BGR scaled, not wrapped
    [[[1, 0, 255]]]
    >>> to_rgb8(np.array([[[0, 0, 0, 0]]], np.uint8)).tolist()        # transparent -> white
    [[[255, 255, 255]]]
    """
    import cv2

    if img.dtype == np.uint16:
        img = ((img.astype(np.uint32) + 128) // 257).astype(np.uint8)
    elif img.dtype != np.uint8:
        img = np.clip(img, 0, 255).astype(np.uint8)
    if img.ndim == 2:
        return cv2.cvtColor(img, cv2.COLOR_GRAY2RGB)
    if img.shape[2] == 4:
        alpha = img[..., 3:4].astype(np.float32) / 255.0
        img = (img[..., :3].astype(np.float32) * alpha + 255.0 * (1 - alpha) + 0.5).astype(np.uint8)
    elif img.shape[2] == 2:  # grey + alpha
        alpha = img[..., 1:2].astype(np.float32) / 255.0
        grey = (img[..., :1].astype(np.float32) * alpha + 255.0 * (1 - alpha) + 0.5).astype(np.uint8)
        return np.repeat(grey, 3, axis=2)
    return cv2.cvtColor(np.ascontiguousarray(img[..., :3]), cv2.COLOR_BGR2RGB)


def read_rgb(path: Path | str) -> np.ndarray:
    """The PNG at ``path`` as 8-bit RGB; InputError naming the file when it cannot be read."""
    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        raise InputError(f"cannot read image: {exc.strerror or exc}", file=str(path)) from exc
    return decode_rgb(data, str(path))


def decode_grey(data: bytes, source: str = "<image>", jpeg_ok: bool = True) -> np.ndarray:
    """PNG (or JPEG) bytes as an H x W uint8 grey array, with the checks of :func:`decode_rgb`;
    for reading text, where a JPEG's blur does little harm."""
    import cv2

    return cv2.cvtColor(decode_rgb(data, source, jpeg_ok), cv2.COLOR_RGB2GRAY)
