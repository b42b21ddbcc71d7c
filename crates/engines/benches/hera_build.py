"""The hera side of `cargo bench -p couler-engines --bench compile`.

Builds the benchmark's generated workflow with hera's DSL (Workflow, DAG,
Container and Script templates, Tasks with dependencies, conditions and
parameters) and serializes it with `to_yaml()`, in two styles: under `with`
blocks as hera documents, and with the same objects passed as lists (much
faster at this size; see `build_explicit`). Build + serialization is timed
in-process (median of 3; interpreter start-up, imports and reading the
description are not timed). Afterwards, untimed, each YAML is compared with
Couler's Argo manifest for the same workflow.

    hera_build.py SHAPE.json COULER_ARGO.yaml HERA_OUT.yaml

Writes HERA_OUT-<style>.yaml and prints one JSON object on the last line of
stdout.
"""

import json
import platform
import statistics
import sys
import time
import warnings
from importlib import metadata

warnings.filterwarnings("ignore")

import yaml
from hera.workflows import (
    DAG,
    Container,
    Env,
    Parameter,
    Resources,
    RetryStrategy,
    Script,
    SecretEnv,
    Task,
    Workflow,
)
from hera.workflows.models import Backoff, Metadata, ValueFrom

RUNS = 3
EXAMPLES = 10

Loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def when(cond):
    """The govaluate condition a hera user writes for the step's `when`."""
    tag = f"'{{{{tasks.{cond['step']}.outputs.parameters.{cond['param']}}}}}'"
    values = cond["values"]
    if cond["op"] == "ne":
        return f"{tag} != '{values[0]}'"
    if cond["op"] == "eq":
        return f"{tag} == '{values[0]}'"
    if cond["op"] == "in":
        each = [f"{tag} == '{v}'" for v in values]
        return each[0] if len(each) == 1 else "(" + " || ".join(each) + ")"
    raise ValueError(f"unknown operator {cond['op']!r}")


def template(step):
    env = [
        SecretEnv(name=e["name"], secret_name=e["secret"]["name"], secret_key=e["secret"]["key"])
        if "secret" in e
        else Env(name=e["name"], value=e["value"])
        for e in step["env"]
    ]
    retry = step.get("retry")
    timeout = step.get("timeoutSeconds")
    common = dict(
        name=step["name"],
        image=step["image"],
        command=step["command"],
        env=env or None,
        resources=Resources(cpu_request=step["cpu"], memory_request=step["memory"]),
        inputs=[Parameter(name=f"{r}-out") for r in step["reads"]] or None,
        outputs=[Parameter(name=o["name"], value_from=ValueFrom(path=o["path"])) for o in step["outputs"]] or None,
        retry_strategy=RetryStrategy(
            limit=str(retry["limit"]),
            retry_policy="Always",
            backoff=Backoff(duration=retry["backoff"], factor=str(retry["factor"])),
        )
        if retry
        else None,
        active_deadline_seconds=str(timeout) if timeout else None,
    )
    if "source" in step:
        return Script(source=step["source"], **common)
    return Container(args=step["args"], **common)


def workflow_fields(shape):
    meta = shape["metadata"]
    return dict(
        name=meta["name"],
        labels=meta.get("labels"),
        annotations=meta.get("annotations"),
        entrypoint=shape["entrypoint"],
        arguments=[Parameter(name=p["name"], value=p["value"]) for p in shape["parameters"]],
        pod_metadata=Metadata(labels=shape["podLabels"]),
    )


def task(step, template):
    return Task(
        name=step["name"],
        template=template,
        depends=" && ".join(f"{d}.Succeeded" for d in step["depends"]) or None,
        when=when(step["when"]) if step.get("when") else None,
        arguments={f"{r}-out": f"{{{{tasks.{r}.outputs.parameters.out}}}}" for r in step["reads"]} or None,
    )


def build_in_context(shape):
    """hera's documented style: templates and tasks declared under `with`."""
    with Workflow(**workflow_fields(shape)) as w:
        with DAG(name=shape["entrypoint"]):
            for step in shape["steps"]:
                task(step, template(step))
    return w


def build_explicit(shape):
    """The same objects passed as lists, without `with`: hera's context
    bookkeeping scans every template per task (quadratic), this does not."""
    templates, tasks = [], []
    for step in shape["steps"]:
        t = template(step)
        templates.append(t)
        tasks.append(task(step, t))
    dag = DAG(name=shape["entrypoint"], tasks=tasks)
    return Workflow(templates=[dag, *templates], **workflow_fields(shape))


STYLES = {"explicit": build_explicit, "context": build_in_context}


def normalize(node):
    """Order that carries no meaning removed: lists of named objects
    (templates, tasks, parameters, env) sorted by name, `depends` terms as a set."""
    if isinstance(node, dict):
        out = {k: normalize(v) for k, v in node.items()}
        if isinstance(out.get("depends"), str):
            out["depends"] = sorted(t.strip() for t in out["depends"].split("&&"))
        return out
    if isinstance(node, list):
        items = [normalize(v) for v in node]
        if items and all(isinstance(v, dict) and "name" in v for v in items):
            items.sort(key=lambda v: str(v["name"]))
        return items
    return node


def diff(ours, theirs, path, found):
    """Appends a line per difference (Couler's value first); returns the count."""
    if isinstance(ours, dict) and isinstance(theirs, dict):
        n = 0
        for k in sorted(set(ours) | set(theirs)):
            at = f"{path}.{k}" if path else k
            if k not in theirs:
                found.append(f"{at}: only in Couler's: {json.dumps(ours[k])[:120]}")
                n += 1
            elif k not in ours:
                found.append(f"{at}: only in hera's: {json.dumps(theirs[k])[:120]}")
                n += 1
            else:
                n += diff(ours[k], theirs[k], at, found)
        return n
    if isinstance(ours, list) and isinstance(theirs, list) and len(ours) == len(theirs):
        n = 0
        for i, (a, b) in enumerate(zip(ours, theirs)):
            label = a["name"] if isinstance(a, dict) and "name" in a else i
            n += diff(a, b, f"{path}[{label}]", found)
        return n
    if ours != theirs:
        found.append(f"{path}: Couler {json.dumps(ours)[:120]} vs hera {json.dumps(theirs)[:120]}")
        return 1
    return 0


def measure(build, shape):
    """Median build and serialization times over RUNS, and the last YAML."""
    runs, builds, dumps = [], [], []
    text = ""
    for _ in range(RUNS):
        started = time.perf_counter()
        w = build(shape)
        built = time.perf_counter()
        text = w.to_yaml()
        done = time.perf_counter()
        builds.append((built - started) * 1e3)
        dumps.append((done - built) * 1e3)
        runs.append((done - started) * 1e3)
        del w
    report = {
        "runs_ms": [round(r, 1) for r in runs],
        "median_ms": statistics.median(runs),
        "build_ms": statistics.median(builds),
        "yaml_ms": statistics.median(dumps),
        "yaml_mb": len(text.encode()) / 1e6,
    }
    return report, text


def main():
    shape_path, couler_path, out_path = sys.argv[1:4]
    with open(shape_path) as f:
        shape = json.load(f)
    with open(couler_path) as f:
        couler = normalize(yaml.load(f, Loader=Loader))

    styles = {}
    for style, build in STYLES.items():
        report, text = measure(build, shape)
        with open(out_path.replace(".yaml", f"-{style}.yaml"), "w") as f:
            f.write(text)
        found = []
        report["differences"] = diff(couler, normalize(yaml.load(text, Loader=Loader)), "", found)
        report["examples"] = found[:EXAMPLES]
        styles[style] = report

    print(
        json.dumps(
            {
                "hera": metadata.version("hera"),
                "python": platform.python_version(),
                "runs": RUNS,
                "styles": styles,
            }
        )
    )


if __name__ == "__main__":
    main()
