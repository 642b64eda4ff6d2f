"""Speed of the judge runner, the checkpoint store and the measured judge.

Run: ``.venv/bin/python benchmarks/bench_judges.py [--quick] [--only resume]``

1. Recorded calls/s against a loopback OpenAI-compatible server (separate
   process, answering at once), concurrency 64, fresh store; beside it, in
   the same run, the bare ``openai.AsyncOpenAI`` client with no runner and no
   store (the peer that bounds us) two ways: ``chat.completions.create`` (typed)
   and ``client.post(..., cast_to=str)`` (the request path the backend uses),
   and the runner + store with an in-process null backend (what the runner
   and SQLite writer cost without HTTP).  Each with this process's CPU ms per
   call, which is steadier than calls/s on a shared machine.
2. Resume decision over a store of 300,000 calls: hash the images, plan the
   keys, load completed keys, find what is missing.
3. The measured judge on 1 MP images, ms per image.
4. Store bytes per call: the same run (3 measured families, 60 calls per
   image, N images) in the v2 layout (what multicrop wrote before schema v4:
   the same rows, the same SQL) and in the v4 layout, both VACUUMed, the
   empty schema subtracted.
5. Two ``multicrop judge`` processes on one store against a loopback
   OpenAI-compatible server: paid requests per call key, and how the two
   split the work.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import dataclasses
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import cv2
import numpy as np
from PIL import Image

from multicrop.judges.backends import JUDGE_BACKENDS, JudgeBackend
from multicrop.judges.measures import measure
from multicrop.judges.panel import Family, Panel
from multicrop.judges.runner import RunConfig, judge_images, plan_calls
from multicrop.judges.types import ImageRef, JudgeReply
from multicrop.judges.store import CallRecord, CallStore

ROOT = Path(__file__).resolve().parents[1]
SERVER = ROOT / "tests" / "judges" / "fake_openai_server.py"


class NullBackend(JudgeBackend):
    """Answers at once, in process: isolates runner + store cost."""

    name = "bench-null"
    needs_network = False

    @dataclasses.dataclass(frozen=True)
    class Options:
        pass

    async def execute(self, request):
        return JudgeReply(text='{"score": 3, "reason": "x"}', model=self.model_id, prompt_tokens=1,
                          completion_tokens=1, cost_usd=0.0)


def _images(n: int, seed: int = 0, side: int = 32) -> list[ImageRef]:
    rng = np.random.default_rng(seed)
    return [ImageRef((rng.random((side, side, 3)) * 255).astype(np.uint8), label=f"im{i}") for i in range(n)]


def _start_server() -> tuple[subprocess.Popen, int]:
    proc = subprocess.Popen([sys.executable, str(SERVER)], stdout=subprocess.PIPE, text=True)
    port = int(proc.stdout.readline().split()[1])
    return proc, port


def _threads() -> int:
    """Threads of this process now (Linux), else Python threads."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("Threads:"):
                return int(line.split()[1])
    except OSError:
        pass
    import threading

    return threading.active_count()


def bench_throughput(n_images: int, concurrency: int) -> dict:
    proc, port = _start_server()
    res = {"loadavg_1m_before": os.getloadavg()[0]}
    try:
        url = f"http://127.0.0.1:{port}/v1"
        fam = Family("vlm", "openai-compatible", "ok", {"base_url": url, "api_key_env": "", "max_side": 64})
        panel = Panel((fam,))
        imgs = _images(n_images)
        with tempfile.TemporaryDirectory() as d, CallStore(Path(d) / "r.sqlite") as store:
            judge_images(_images(2, seed=99), panel, store, config=RunConfig(concurrency=concurrency))  # warm up
            t, c = time.perf_counter(), time.process_time()
            s, _ = judge_images(imgs, panel, store, config=RunConfig(concurrency=concurrency))
            dt, cpu = time.perf_counter() - t, time.process_time() - c
            assert s.performed == len(imgs) * 20 and len(store) == s.performed + 40
        res["openai_runner_calls_per_s"] = s.performed / dt
        res["openai_runner_cpu_ms_per_call"] = cpu / s.performed * 1000
        res["openai_runner_calls"] = s.performed
        res["threads_after_runner"] = _threads()

        # Peer: the bare openai client, same request shape, no runner, no store.
        import openai

        msgs = [{"role": "user", "content": [{"type": "text", "text": "rate as a whole " * 60},
                                             {"type": "image_url", "image_url": {"url": imgs[0].data_url(64)}}]}]

        async def bare(n: int, how: str) -> tuple[float, float]:
            client = openai.AsyncOpenAI(api_key="x", base_url=url, max_retries=0)

            async def one():
                if how == "post":
                    body = {"model": "ok", "messages": msgs, "temperature": 0.3}
                    return json.loads(await client.post("/chat/completions", cast_to=str, body=body))
                r = await client.chat.completions.create(model="ok", messages=msgs, temperature=0.3)
                return r.choices[0].message.content

            async def drive(k: int) -> None:  # `concurrency` workers, like the runner
                it = iter(range(k))

                async def w():
                    for _ in it:
                        await one()

                await asyncio.gather(*[w() for _ in range(concurrency)])

            await drive(100)
            t0, c0 = time.perf_counter(), time.process_time()
            await drive(n)
            dt, cpu = time.perf_counter() - t0, time.process_time() - c0
            await client.close()
            return n / dt, cpu / n * 1000

        for how in ("create", "post"):
            rate, cpu_ms = asyncio.run(bare(res["openai_runner_calls"], how))
            res[f"bare_openai_client_{how}_calls_per_s"] = rate
            res[f"bare_openai_client_{how}_cpu_ms_per_call"] = cpu_ms
        res["runner_over_bare_create"] = res["openai_runner_calls_per_s"] / res["bare_openai_client_create_calls_per_s"]
        res["loadavg_1m_after"] = os.getloadavg()[0]
    finally:
        proc.terminate()
        proc.wait()

    if "bench-null" not in JUDGE_BACKENDS:
        JUDGE_BACKENDS.register(NullBackend)
    panel = Panel((Family("null", "bench-null", "null"),))
    imgs = _images(n_images * 4, seed=5)
    with tempfile.TemporaryDirectory() as d, CallStore(Path(d) / "r.sqlite") as store:
        t = time.perf_counter()
        s, _ = judge_images(imgs, panel, store, config=RunConfig(concurrency=concurrency))
        dt = time.perf_counter() - t
    res["null_backend_runner_store_calls_per_s"] = s.performed / dt
    res["null_backend_ms_per_call"] = dt / s.performed * 1000
    res["null_backend_calls"] = s.performed
    return res


def bench_resume(n_calls: int) -> dict:
    fams = tuple(Family(f"f{i}", "measured", f"measured-v1-{i}") for i in range(3))
    panel = Panel(fams)  # 3 families x (5 + 15) = 60 calls per image
    per_image = 60
    n_images = n_calls // per_image
    res = {"calls": n_images * per_image, "images": n_images}
    with tempfile.TemporaryDirectory() as d:
        d = Path(d)
        rng = np.random.default_rng(0)
        paths = []
        for i in range(n_images):
            p = d / f"im{i:05d}.png"
            Image.fromarray((rng.random((8, 8, 3)) * 255).astype(np.uint8)).save(p)
            paths.append(p)
        db = d / "big.sqlite"
        backends = {f.name: f.create() for f in fams}
        t = time.perf_counter()
        plan = plan_calls([ImageRef(p, label=str(p)) for p in paths], panel, backends)
        with CallStore(db) as store:
            batch = []
            for c in plan:
                batch.append(CallRecord.new(
                    key_json=c.key_json, family=c.family.name, backend="measured", model_requested=c.family.model,
                    model_returned=c.family.model, image=c.image.label, image_sha256=c.image.sha256,
                    prompt_kind=c.prompt.kind, dimension=c.prompt.dimension, template=c.prompt.template.ref,
                    rubric_sha256="sha256:x", temperature=0.3, repetition=c.repetition, prompt_tokens=0,
                    completion_tokens=0, cost_usd=0.0, latency_s=0.0, attempts=1, raw_reply='{"score": 3}',
                    score=3.0, reason=None, parse_error=None))
                if len(batch) == 5000:
                    store.record(batch)
                    batch = []
            store.record(batch)
        res["build_s"] = time.perf_counter() - t
        res["db_mb"] = db.stat().st_size / 1e6

        # The resume decision, as `multicrop judge` does it on a rerun.
        t = time.perf_counter()
        refs = [ImageRef(p, label=str(p)) for p in paths]
        t_hash = time.perf_counter() - t
        with CallStore(db) as store:
            s, _ = judge_images(refs, panel, store)
        res["resume_s"] = time.perf_counter() - t
        res["resume_hash_images_s"] = t_hash
        res["resume_missing"] = s.planned - s.already_done
        assert s.planned == res["calls"] and s.performed == 0
    return res


def bench_measured(n: int = 20) -> dict:
    from multicrop.datasets.photos import sample_photo

    img = cv2.resize(sample_photo("astronaut"), (1155, 866), interpolation=cv2.INTER_CUBIC)  # 1.0 MP
    res = {"image": "astronaut resized to 1155x866 (1.0 MP)", "cv2_threads_default": cv2.getNumThreads()}
    for threads in (cv2.getNumThreads(), 1):
        cv2.setNumThreads(threads)
        measure(img)
        t = time.perf_counter()
        for _ in range(n):
            measure(img)
        res[f"ms_per_image_cv2_threads_{threads}"] = (time.perf_counter() - t) / n * 1000
    cv2.setNumThreads(res["cv2_threads_default"])
    with tempfile.TemporaryDirectory() as d:
        p = Path(d) / "a.jpg"
        Image.fromarray(img).save(p, quality=92)
        t = time.perf_counter()
        for _ in range(n):
            ref = ImageRef(p)
            measure(ref.array(1024))
        res["ms_per_jpeg_incl_hash_decode"] = (time.perf_counter() - t) / n * 1000
    return res


def bench_store_size(n_images: int) -> dict:
    import sqlite3

    from multicrop.judges.store import MIGRATIONS

    fams = tuple(Family(f"f{i}", "measured", f"measured-v1-{i}") for i in range(3))
    panel = Panel(fams)  # 60 calls per image
    rng = np.random.default_rng(0)
    refs = [ImageRef((rng.random((48, 64, 3)) * 255).astype(np.uint8), label=f"photos/im{i:05d}.jpg")
            for i in range(n_images)]

    def vacuumed(path: Path) -> int:
        con = sqlite3.connect(path)
        con.execute("VACUUM")
        con.close()
        return path.stat().st_size

    def v2(path: Path, records) -> int:
        con = sqlite3.connect(path)
        for step in MIGRATIONS[:2]:
            con.executescript(step)
        cols = ", ".join(f.name for f in dataclasses.fields(CallRecord))
        con.executemany(f"INSERT INTO calls ({cols}) VALUES ({', '.join('?' * 25)})", [r.row() for r in records])
        con.execute("PRAGMA user_version = 2")
        con.commit()
        con.close()
        return vacuumed(path)

    with tempfile.TemporaryDirectory() as d:
        d = Path(d)
        with CallStore(d / "v4.sqlite") as store:
            judge_images(refs, panel, store)
            records = list(store.iter_records())
        CallStore(d / "empty4.sqlite").close()
        n = len(records)
        b2 = v2(d / "v2.sqlite", records) - v2(d / "empty2.sqlite", [])
        b4 = vacuumed(d / "v4.sqlite") - vacuumed(d / "empty4.sqlite")
    return {"calls": n, "images": n_images, "v2_bytes_per_call": b2 / n, "v4_bytes_per_call": b4 / n,
            "ratio": b2 / b4}


def bench_two_processes(n_images: int) -> dict:
    import hashlib
    import importlib.util
    from collections import Counter

    spec = importlib.util.spec_from_file_location(
        "fake_openai_server", Path(__file__).resolve().parents[1] / "tests" / "judges" / "fake_openai_server.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    with tempfile.TemporaryDirectory() as d, mod.FakeOpenAIServer() as srv:
        d = Path(d)
        rng = np.random.default_rng(1)
        imgs = []
        for i in range(n_images):
            p = d / f"im{i}.png"
            Image.fromarray((rng.random((24, 32, 3)) * 255).astype(np.uint8)).save(p)
            imgs.append(str(p))
        (d / "panel.toml").write_text(
            '[[families]]\nname = "slow"\nbackend = "openai-compatible"\nmodel = "slow:0.05"\n'
            f'options = {{ base_url = "{srv.base_url}", api_key_env = "", max_side = 64 }}\n')
        cmd = [sys.executable, "-m", "multicrop", "judge", *imgs, "--panel", str(d / "panel.toml"), "--db",
               str(d / "runs.sqlite"), "--concurrency", "8", "--no-progress", "--json"]
        procs = [subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for _ in range(2)]
        infos = [json.loads(p.communicate()[0]) for p in procs]
        plan_calls_total = n_images * 20
        # Repetitions of one prompt send the same body: a key is paid once when
        # each body is paid as often as it has keys (5 holistic, 3 per dimension).
        per_body = Counter(hashlib.sha256(json.dumps(b, sort_keys=True).encode()).hexdigest() for b in srv.bodies)
        keys = infos[0]["planned"]
        return {"calls_planned": plan_calls_total, "paid_requests": srv.requests,
                "paid_requests_per_key": srv.requests / keys,
                "bodies_paid_more_than_their_keys": sum(v not in (3, 5) for v in per_body.values()),
                "performed_by_each": [i["performed"] for i in infos],
                "done_elsewhere_by_each": [i["done_elsewhere"] for i in infos]}


@contextlib.contextmanager
def _every_repetition_a_call():
    """The measured judge keyed like a sampled chat model (no collapsed repetitions, prompts in the keys).

    The resume and store-size benchmarks use measured families as a cheap
    stand-in for 60 distinct calls per image; measured itself is
    deterministic now and would make 18 of them.
    """
    from multicrop.judges.backends.measured import MeasuredBackend

    old = MeasuredBackend.deterministic, MeasuredBackend.reads_prompt
    MeasuredBackend.deterministic, MeasuredBackend.reads_prompt = False, True
    try:
        yield
    finally:
        MeasuredBackend.deterministic, MeasuredBackend.reads_prompt = old


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true", help="smaller sizes (smoke run)")
    ap.add_argument("--only", choices=("measured", "throughput", "resume", "size", "two"), action="append",
                    help="run only this part (repeatable); default: all")
    args = ap.parse_args()
    parts = set(args.only or ("measured", "throughput", "resume", "size", "two"))
    import openai

    out = {"cpus": os.cpu_count(), "python": sys.version.split()[0], "openai": openai.__version__,
           "loadavg_1m_start": os.getloadavg()[0]}
    if "measured" in parts:
        out["measured"] = bench_measured()
    if "throughput" in parts:
        out["throughput_c64"] = bench_throughput(40 if args.quick else 250, 64)
    if "resume" in parts:
        with _every_repetition_a_call():
            out["resume"] = bench_resume(30_000 if args.quick else 300_000)
    if "size" in parts:
        with _every_repetition_a_call():
            out["store_size"] = bench_store_size(20 if args.quick else 100)
    if "two" in parts:
        out["two_processes"] = bench_two_processes(10 if args.quick else 40)
    out["loadavg_1m_end"] = os.getloadavg()[0]
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
