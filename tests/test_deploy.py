"""Serving a large class: the nginx configuration of deploy/nginx/ and scripts/serve_many.py.

The configuration is checked as text everywhere; nginx itself checks it (`nginx -t`) and carries a session's
websocket to a script run, sticky to one of two app processes, where Debian's nginx is installed
(`apt-get install -y nginx`); elsewhere those two are skipped.
"""
import asyncio
import re
import shutil
import subprocess
import sys
import tomllib
import urllib.request
from pathlib import Path

import pytest

from scripts import serve_many

ROOT = Path(__file__).resolve().parents[1]
SHIPPED = ROOT / "deploy" / "nginx" / "explainer.conf"
NGINX = shutil.which("nginx") or next((p for p in serve_many.NGINX_CANDIDATES if Path(p).exists()), None)
needs_nginx = pytest.mark.skipif(NGINX is None, reason="nginx not installed (apt-get install -y nginx)")


def test_the_shipped_site_is_the_template_filled_in():
    expected = serve_many.site_config([8501, 8502, 8503, 8504], listen="80", server_name="_")
    assert SHIPPED.read_text() == expected, "run: python scripts/serve_many.py --apps 4 --port 80 --print-site"
    assert "@" not in re.sub(r"#.*", "", expected)  # every field filled


def test_the_site_keeps_a_browser_on_one_process_and_lets_its_websocket_and_uploads_through():
    site = re.sub(r"#.*", "", serve_many.site_config([9001, 9002], listen="127.0.0.1:9000"))  # no comments
    assert re.findall(r"server 127\.0\.0\.1:(\d+);", site) == ["9001", "9002"]
    assert re.search(r"hash \$explainer_key consistent;", site)  # sticky: by cookie, else by address
    assert re.search(r'""\s+\$remote_addr;\s+default \$cookie_explainer_backend;', site)
    assert re.search(r"add_header Set-Cookie \$explainer_set_cookie always;", site)
    assert "ip_hash" not in site
    assert re.search(r"proxy_set_header Upgrade \$http_upgrade;", site)
    assert re.search(r"proxy_set_header Connection \$explainer_connection;", site)
    assert re.search(r"proxy_set_header Host \$http_host;", site)  # Streamlit compares Origin with it
    upload_mb = tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text())["server"]["maxUploadSize"]
    body_mb = int(re.search(r"client_max_body_size (\d+)m;", site).group(1))
    assert body_mb > upload_mb  # nginx must not refuse a checkpoint Streamlit accepts
    line_kb = int(re.search(r"large_client_header_buffers \d+ (\d+)k;", site).group(1))
    assert line_kb >= 64  # lesson 13's longest link, percent-encoded (up to 54 kB), must not get a 414
    timeout = re.search(r"proxy_read_timeout (\d+)([smh]);", site)
    assert int(timeout.group(1)) * {"s": 1, "m": 60, "h": 3600}[timeout.group(2)] > 30  # Streamlit pings every 30 s


@needs_nginx
def test_nginx_accepts_the_configuration(tmp_path):
    site = serve_many.site_config([9001, 9002], listen="127.0.0.1:9000")
    (tmp_path / "explainer.conf").write_text(site)
    main = (ROOT / "deploy" / "nginx" / "nginx.conf.in").read_text().replace("@PREFIX@", str(tmp_path))
    (tmp_path / "nginx.conf").write_text(main)
    checked = subprocess.run([NGINX, "-t", "-p", str(tmp_path), "-c", str(tmp_path / "nginx.conf"),
                              "-e", str(tmp_path / "error.log")], capture_output=True, text=True, timeout=30)
    assert checked.returncode == 0, checked.stderr


@needs_nginx
def test_two_apps_behind_nginx_serve_a_session_each_on_one_process(tmp_path):
    sys.path.insert(0, str(ROOT / "tests" / "benchmarks"))
    from load_client import Tab

    async def visit(url: str) -> Tab:
        tab = Tab(url)
        seconds = await tab.open("", "seed=7")
        await tab.close()
        assert seconds == seconds and not tab.errors, tab.errors  # a run finished, no exception box
        assert "seed=7" in tab.query and tab.pages  # the app's own messages came back through the proxy
        for _ in range(3):  # more requests of the same browser: they must reach the same process
            request = urllib.request.Request(f"{url}/_stcore/health", headers={"Cookie": tab.cookie})
            assert urllib.request.urlopen(request, timeout=30).status == 200
        return tab

    async def two_browsers(url: str) -> None:
        await asyncio.gather(visit(url), visit(url))

    with serve_many.serving(2, workdir=tmp_path) as served:
        asyncio.run(two_browsers(served.url))
        assert all(app.process.poll() is None for app in served.apps)
    routes: dict[str, set[str]] = {}
    for line in (tmp_path / "access.log").read_text().splitlines():
        _, status, upstream, cookie, request = line.split(" ", 4)
        if cookie != '"-"':
            routes.setdefault(cookie, set()).add(upstream)
    assert len(routes) == 2 and all(len(upstreams) == 1 for upstreams in routes.values()), routes  # 4 requests each
    assert all(app.process.poll() is not None for app in served.apps) and served.nginx.poll() is not None
