"""A self-contained HTML report: what a command found, the figures beside the tables, the
wording of what each number means, and where it came from.

``Report(title)`` collects sections (paragraphs, tables from pandas, matplotlib figures,
definitions of the numbers) and provenance (data digest, spec, seed, bayeschain version);
``Report.write(path)`` writes one HTML5 file, figures embedded as PNG data URIs, styles
inline, no script and no external resource, atomically (:func:`bayeschain.io.write.atomic_output`).
Every text is escaped, so run names and file names cannot inject markup.
"""

from __future__ import annotations

import base64
import html
import io
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

_STYLE = """
body { font-family: system-ui, -apple-system, "Segoe UI", sans-serif; margin: 2rem auto;
       max-width: 60rem; padding: 0 1rem; color: #1b1b1b; line-height: 1.45; }
h1 { font-size: 1.6rem; } h2 { font-size: 1.25rem; margin-top: 2rem;
     border-bottom: 1px solid #ddd; }
table { border-collapse: collapse; margin: 0.8rem 0; font-size: 0.9rem; }
th, td { border: 1px solid #ccc; padding: 0.25rem 0.6rem; text-align: right; }
th { background: #f3f3f3; } td:first-child, th:first-child { text-align: left; }
figure { margin: 1rem 0; } figure img { max-width: 100%; height: auto; }
figcaption { font-size: 0.85rem; color: #555; }
dl { font-size: 0.92rem; } dt { font-weight: 600; margin-top: 0.4rem; }
.provenance { font-size: 0.85rem; color: #444; }
"""


@dataclass
class _Section:
    heading: str
    parts: list[str] = field(default_factory=list)


class Report:
    """An HTML report under construction (see the module docstring)."""

    def __init__(self, title: str, *, intro: str = ""):
        self.title = title
        self.intro = intro
        self.sections: list[_Section] = []
        self.provenance: dict[str, str] = {}

    def section(self, heading: str) -> Report:
        self.sections.append(_Section(heading))
        return self

    def _current(self) -> _Section:
        if not self.sections:
            self.section("Results")
        return self.sections[-1]

    def paragraph(self, text: str) -> Report:
        self._current().parts.append(f"<p>{html.escape(text)}</p>")
        return self

    def table(self, frame, *, caption: str = "", digits: int = 4) -> Report:
        """A pandas DataFrame as a table (index dropped; floats to ``digits`` decimals)."""
        cols = [str(c) for c in frame.columns]
        rows = []
        for row in frame.itertuples(index=False):
            cells = []
            for v in row:
                if isinstance(v, float):
                    text = f"{v:.{digits}f}"
                else:
                    text = str(v)
                cells.append(f"<td>{html.escape(text)}</td>")
            rows.append("<tr>" + "".join(cells) + "</tr>")
        cap = f"<caption>{html.escape(caption)}</caption>" if caption else ""
        head = "<tr>" + "".join(f"<th scope=\"col\">{html.escape(c)}</th>" for c in cols) + \
            "</tr>"
        self._current().parts.append(f"<table>{cap}<thead>{head}</thead><tbody>"
                                     + "".join(rows) + "</tbody></table>")
        return self

    def figure(self, fig, *, caption: str, dpi: int = 100) -> Report:
        """A matplotlib figure embedded as a PNG (the figure is closed)."""
        import matplotlib.pyplot as plt

        buf = io.BytesIO()
        try:
            fig.savefig(buf, format="png", dpi=dpi, bbox_inches="tight")
        finally:
            plt.close(fig)
        data = base64.b64encode(buf.getvalue()).decode("ascii")
        self._current().parts.append(
            f"<figure><img src=\"data:image/png;base64,{data}\" alt=\"{html.escape(caption)}\">"
            f"<figcaption>{html.escape(caption)}</figcaption></figure>")
        return self

    def definitions(self, items: dict[str, str]) -> Report:
        """What each number means: ``{name: meaning}``."""
        body = "".join(f"<dt>{html.escape(k)}</dt><dd>{html.escape(v)}</dd>"
                       for k, v in items.items())
        self._current().parts.append(f"<dl>{body}</dl>")
        return self

    def provenance_of(self, **items) -> Report:
        """Where the numbers come from (data digest, spec, seed, ...)."""
        self.provenance.update({k: str(v) for k, v in items.items()})
        return self

    def to_html(self) -> str:
        from . import __version__

        prov = {"bayeschain": __version__,
                "written": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
                **self.provenance}
        body = [f"<h1>{html.escape(self.title)}</h1>"]
        if self.intro:
            body.append(f"<p>{html.escape(self.intro)}</p>")
        for sec in self.sections:
            body.append(f"<section><h2>{html.escape(sec.heading)}</h2>"
                        + "".join(sec.parts) + "</section>")
        rows = "".join(f"<tr><th scope=\"row\">{html.escape(k)}</th><td>{html.escape(v)}</td>"
                       f"</tr>" for k, v in prov.items())
        body.append(f"<section class=\"provenance\"><h2>Provenance</h2><table><tbody>{rows}"
                    f"</tbody></table></section>")
        return ("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
                "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
                f"<title>{html.escape(self.title)}</title>\n<style>{_STYLE}</style>\n"
                "</head>\n<body>\n<main>\n" + "\n".join(body) + "\n</main>\n</body>\n</html>\n")

    def write(self, path, *, force: bool = False) -> Path:
        """Write the report atomically; an existing file is kept unless ``force``."""
        from .io.write import atomic_output

        with atomic_output(path, force=force) as tmp:
            tmp.write_text(self.to_html(), encoding="utf-8")
        return Path(path)
