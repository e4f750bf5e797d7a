"""Real documents made in the tests: text files in a new folder, a small PDF written by
hand (text on numbered pages), an encrypted copy, an image-only one, Word files written
by python-docx."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path


def write_docs(folder: Path, texts: Mapping[str, str]) -> Path:
    """A new folder holding one UTF-8 file per name in `texts`."""
    folder.mkdir()
    for name, text in texts.items():
        (folder / name).write_text(text, encoding="utf-8")
    return folder


def _escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")


def pdf_bytes(pages: list[list[str]], *, title: str = "") -> bytes:
    """A valid PDF whose page n shows the lines of `pages[n]` in Helvetica (a text layer)."""
    objects: list[bytes] = []
    count = len(pages)
    kids = " ".join(f"{4 + 2 * i} 0 R" for i in range(count))
    objects.append(b"<< /Type /Catalog /Pages 2 0 R >>")
    objects.append(f"<< /Type /Pages /Kids [{kids}] /Count {count} >>".encode())
    objects.append(b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>")
    for i, lines in enumerate(pages):
        content = "BT /F1 11 Tf 72 740 Td 14 TL " + " ".join(
            f"({_escape(line)}) Tj T*" for line in lines
        )
        content += " ET"
        stream = content.encode("latin-1")
        objects.append(
            f"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] "
            f"/Resources << /Font << /F1 3 0 R >> >> /Contents {5 + 2 * i} 0 R >>".encode()
        )
        objects.append(b"<< /Length %d >>\nstream\n" % len(stream) + stream + b"\nendstream")
    info = None
    if title:
        objects.append(f"<< /Title ({_escape(title)}) >>".encode())
        info = len(objects)
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % number + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    for offset in offsets:
        out += b"%010d 00000 n \n" % offset
    trailer = f"<< /Size {len(objects) + 1} /Root 1 0 R"
    trailer += f" /Info {info} 0 R >>" if info else " >>"
    out += b"trailer\n" + trailer.encode() + b"\nstartxref\n%d\n%%%%EOF\n" % xref
    return bytes(out)


def write_pdf(path: Path, pages: list[list[str]], *, title: str = "") -> Path:
    path.write_bytes(pdf_bytes(pages, title=title))
    return path


def write_encrypted_pdf(path: Path, source: Path, password: str = "s3cret") -> Path:
    from pypdf import PdfReader, PdfWriter

    writer = PdfWriter(clone_from=PdfReader(source))
    writer.encrypt(user_password=password, owner_password=password, algorithm="RC4-128")
    with path.open("wb") as stream:
        writer.write(stream)
    return path


def write_image_only_pdf(path: Path, pages: int = 2) -> Path:
    """Pages with no text layer, as a scanner makes them (here: blank)."""
    from pypdf import PdfWriter

    writer = PdfWriter()
    for _ in range(pages):
        writer.add_blank_page(width=612, height=792)
    with path.open("wb") as stream:
        writer.write(stream)
    return path


def write_docx(path: Path, *, title: str = "") -> Path:
    """A Word file with a title, headings, paragraphs, a list and a table."""
    import docx

    document = docx.Document()
    if title:
        document.core_properties.title = title
    document.add_heading("Travel policy", level=1)
    document.add_paragraph("Staff book trains for trips under 500 km.")
    document.add_heading("Hotels", level=2)
    document.add_paragraph("Hotels up to 180 EUR per night are approved without asking.")
    document.add_paragraph("Keep the receipt", style="List Bullet")
    document.add_heading("Per diem", level=2)
    table = document.add_table(rows=3, cols=2)
    for row, (city, amount) in enumerate(
        [("City", "Per diem"), ("Berlin", "42 EUR"), ("Tokyo", "6100 JPY")]
    ):
        table.cell(row, 0).text = city
        table.cell(row, 1).text = amount
    document.save(str(path))
    return path
