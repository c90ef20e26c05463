"""The web page's files (HTML, CSS, JavaScript), served by memvault/server/web.py: no build
step, nothing loaded from elsewhere."""
