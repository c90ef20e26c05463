"""The web page's files (HTML, CSS, JavaScript), served by memvault/server/web/app.py: no build
step, nothing loaded from elsewhere."""
