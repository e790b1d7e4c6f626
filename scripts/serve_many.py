"""Serve a large class: K app processes behind nginx, with sticky sessions and websockets.

    python scripts/serve_many.py --apps 4 --port 8080        # http://<this machine>:8080 until Ctrl-C
    python scripts/serve_many.py --apps 4 --port 80 --print-site > /etc/nginx/sites-available/explainer
    python scripts/serve_many.py --apps 4 --no-nginx          # only the apps, behind a system nginx

Starts K `streamlit run app.py` servers on 127.0.0.1 (ports --app-port, --app-port + 1, ...; 0 picks free ones),
each a process of its own (a session lives in one process, so K processes use up to K cores), then Debian's
nginx (`apt-get install -y nginx`) in the foreground with deploy/nginx/nginx.conf.in and explainer.conf.in filled
in, its pid, logs and temporary files in a folder of its own (--workdir, else a new temporary folder). Every
process it starts is stopped when it ends: Ctrl-C, SIGTERM, or nginx exiting. An app process that dies is
started again (its learners' sessions are lost; their pages reconnect to a fresh session), at most
`RESTARTS` times each. The K processes share one `server.cookieSecret`, drawn at start.

`--print-site` prints only the site configuration, for a system nginx, and starts nothing; `--no-nginx` then starts
(and restarts) only the app processes on their fixed ports, for that nginx to reach. `serving(...)` is the same as
a context manager, for tests and tests/benchmarks/bench_load.py.
"""
from __future__ import annotations

import argparse
import contextlib
import os
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from scripts.browser import SERVER_START_SECONDS, _stop, _wait_for_health, free_port  # noqa: E402

NGINX_DIR = ROOT / "deploy" / "nginx"
NGINX_CANDIDATES = ("/usr/sbin/nginx", "/usr/local/sbin/nginx")
MAX_APPS, RESTARTS = 16, 5


def site_config(app_ports: list[int], listen: str = "80", server_name: str = "_") -> str:
    """explainer.conf.in filled in: nginx listens on `listen` and spreads browsers over `app_ports`."""
    servers = "\n".join(f"    server 127.0.0.1:{port};" for port in app_ports)
    text = (NGINX_DIR / "explainer.conf.in").read_text()
    return text.replace("@APP_SERVERS@", servers).replace("@LISTEN@", listen).replace("@SERVER_NAME@", server_name)


def nginx_binary() -> str:
    found = shutil.which("nginx") or next((path for path in NGINX_CANDIDATES if os.access(path, os.X_OK)), None)
    if found is None:
        raise SystemExit("nginx is not installed: on Debian or Ubuntu, `apt-get install -y nginx`")
    return found


@dataclass
class App:
    port: int
    process: subprocess.Popen
    log_path: Path
    restarts: int = 0


@dataclass
class Serving:
    url: str  # what a browser opens: http://127.0.0.1:PORT (nginx)
    workdir: Path  # nginx.conf, explainer.conf, access.log, error.log, app-PORT.log
    env: dict[str, str]  # the apps' environment (their shared cookie secret)
    apps: list[App] = field(default_factory=list)
    nginx: subprocess.Popen | None = None

    def app_pids(self) -> list[int]:
        return [app.process.pid for app in self.apps]


def start_app(port: int, workdir: Path, env: dict[str, str]) -> App:
    """One `streamlit run app.py` on 127.0.0.1:port (the same options as scripts/browser.running_app)."""
    log_path = workdir / f"app-{port}.log"
    command = [sys.executable, "-m", "streamlit", "run", "app.py", "--server.headless", "true",
               "--server.address", "127.0.0.1", "--server.port", str(port), "--server.fileWatcherType", "none",
               "--browser.gatherUsageStats", "false"]
    with open(log_path, "a") as log:
        process = subprocess.Popen(command, cwd=ROOT, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                                   env=env, start_new_session=True)
    return App(port, process, log_path)


def start_nginx(serving: Serving, listen: str) -> None:
    """Write nginx.conf and explainer.conf into the workdir, check them with `nginx -t`, start nginx."""
    prefix = str(serving.workdir)
    site = site_config([app.port for app in serving.apps], listen=listen)
    (serving.workdir / "explainer.conf").write_text(site)
    (serving.workdir / "nginx.conf").write_text((NGINX_DIR / "nginx.conf.in").read_text().replace("@PREFIX@", prefix))
    command = [nginx_binary(), "-p", prefix, "-c", f"{prefix}/nginx.conf", "-e", f"{prefix}/error.log"]
    checked = subprocess.run([*command, "-t", "-q"], capture_output=True, text=True)
    if checked.returncode:
        raise RuntimeError(f"nginx rejected the configuration:\n{checked.stderr}")
    serving.nginx = subprocess.Popen([*command, "-g", "daemon off;"], stdin=subprocess.DEVNULL,
                                     start_new_session=True)


@contextlib.contextmanager
def serving(apps: int, port: int = 0, app_port: int = 0, workdir: Path | None = None, public: bool = False,
            nginx: bool = True):
    """K app processes behind nginx on `port` (0: a free one); yields a `Serving` once nginx answers (without
    `nginx`, once the apps answer); always stops everything it started. nginx listens on 127.0.0.1 unless
    `public`."""
    if not 1 <= apps <= MAX_APPS:
        raise ValueError(f"--apps must be between 1 and {MAX_APPS}")
    workdir = Path(workdir or tempfile.mkdtemp(prefix="explainer-serve-"))
    workdir.mkdir(parents=True, exist_ok=True)
    workdir.chmod(0o755)  # nginx's workers (user nobody when started as root) create their temporary files here
    env = {**os.environ, "STREAMLIT_SERVER_COOKIE_SECRET": secrets.token_hex(32)}
    ports = [app_port + i if app_port else free_port() for i in range(apps)]
    port = port or free_port()
    result = Serving(f"http://127.0.0.1:{port}", workdir, env)
    try:
        result.apps = [start_app(p, workdir, env) for p in ports]
        for app in result.apps:
            _wait_for_health(f"http://127.0.0.1:{app.port}", app.process, app.log_path, SERVER_START_SECONDS)
        if nginx:
            start_nginx(result, str(port) if public else f"127.0.0.1:{port}")
            _wait_for_health(result.url, result.nginx, workdir / "error.log", 30)
        yield result
    finally:
        stop_all(result)


def stop_all(result: Serving) -> None:
    if result.nginx is not None:
        _stop(result.nginx)
    for app in result.apps:
        _stop(app.process)


def watch(result: Serving) -> None:
    """Until nginx exits (forever without nginx): start again an app process that died (RESTARTS times each)."""
    while result.nginx is None or result.nginx.poll() is None:
        time.sleep(2)
        for i, app in enumerate(result.apps):
            if app.process.poll() is None:
                continue
            if app.restarts >= RESTARTS:
                raise SystemExit(f"the app on port {app.port} died {RESTARTS + 1} times; see {app.log_path}")
            print(f"the app on port {app.port} exited ({app.process.returncode}); starting it again", flush=True)
            restarted = start_app(app.port, result.workdir, result.env)
            restarted.restarts = app.restarts + 1
            result.apps[i] = restarted
    raise SystemExit(f"nginx exited ({result.nginx.returncode}); see {result.workdir / 'error.log'}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--apps", type=int, default=2, help="app processes (about one per core)")
    parser.add_argument("--port", type=int, default=8080, help="the port nginx listens on")
    parser.add_argument("--app-port", type=int, default=8501, help="the first app's port (0: free ports)")
    parser.add_argument("--public", action="store_true", help="listen on every address, not only 127.0.0.1")
    parser.add_argument("--workdir", type=Path, help="nginx's configuration, logs and pid (default: a new temp folder)")
    parser.add_argument("--print-site", action="store_true", help="print the site configuration and exit")
    parser.add_argument("--no-nginx", action="store_true", help="start only the apps (for a system nginx)")
    parser.add_argument("--server-name", default="_", help="with --print-site: nginx's server_name")
    args = parser.parse_args()
    if args.print_site:
        print(site_config([args.app_port + i for i in range(args.apps)], str(args.port), args.server_name), end="")
        return
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):  # leave through the context manager, which stops all
        signal.signal(sig, lambda *_: sys.exit(0))
    with serving(args.apps, args.port, args.app_port, args.workdir, args.public, not args.no_nginx) as result:
        front = "no nginx" if args.no_nginx else f"behind nginx on {'port ' if args.public else ''}" + (
            str(args.port) if args.public else result.url)
        print(f"{args.apps} app processes on ports {[app.port for app in result.apps]}, {front}; logs in "
              f"{result.workdir}. Ctrl-C stops them all.", flush=True)
        watch(result)


if __name__ == "__main__":
    main()
