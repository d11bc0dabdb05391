"""HTML export of sessions: ``export.html.export_session_html`` renders a self-contained page."""
