"""HTML export of sessions (agent-behaviour §11).

Importing this package loads markdown-it and Pygments; import it lazily from hot paths.
"""

from xcsh.coding.export.html import export_session_html, render_session_html

__all__ = ["export_session_html", "render_session_html"]
