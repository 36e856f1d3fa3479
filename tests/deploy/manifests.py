"""Checks of the deployment manifests in deploy/: each parsed with a standard parser (tomllib, PyYAML)
and validated against its project's published JSON Schema (vendored in deploy/schemas/, see its
README), then against what the schemas cannot say — the rules the projects' own parsers apply, and
what this deployment promises (one component, the file `mediagate component --world http-gate`
writes, nothing granted but HTTP).

Every check returns a list of problems, one sentence each; an empty list means the file passes.
"""

import json
import re
import tomllib
from functools import cache
from pathlib import Path

import jsonschema
import yaml

ROOT = Path(__file__).resolve().parents[2]
DEPLOY = ROOT / "deploy"
SCHEMAS = DEPLOY / "schemas"

# What `mediagate component --world http-gate --out deploy/mediagate-http-gate.wasm` writes; both
# manifests name it relative to deploy/.
COMPONENT_FILE = "mediagate-http-gate.wasm"
WRITE_COMMAND = f"mediagate component --world http-gate --out deploy/{COMPONENT_FILE}"
SPIN_COMPONENT_ID = "mediagate-http-gate"
WADM_COMPONENT_NAME = "http-gate"

SPIN_SCHEMA = "spin-manifest-v2.schema.json"
WADM_SCHEMA = "wadm-oam.schema.json"


@cache
def schema(name: str) -> dict:
    return json.loads((SCHEMAS / name).read_text())


def _validator(root: dict, ref: str | None = None):
    """A validator for the schema `root` (its own draft, checked first), or for its definition `ref`."""
    cls = jsonschema.validators.validator_for(root)
    cls.check_schema(root)
    if ref is None:
        return cls(root)
    # Draft 7 ignores the siblings of `$ref`; `definitions` is carried so the reference resolves.
    return cls({"$ref": ref, "definitions": root.get("definitions", {}), "$defs": root.get("$defs", {})})


def schema_problems(name: str, doc, ref: str | None = None, where: str = "") -> list[str]:
    """`doc` against the vendored schema `name` (or its definition `ref`): one line per error."""
    errors = sorted(_validator(schema(name), ref).iter_errors(doc), key=lambda e: list(map(str, e.absolute_path)))
    out = []
    for e in errors:
        path = "/".join(str(p) for p in e.absolute_path)
        at = "/".join(p for p in (where, path) if p) or "the document"
        out.append(f"{at}: {e.message} (schema {name})")
    return out


# ---- Spin ----------------------------------------------------------------------------------------


def spin_id_problem(ident: str) -> str | None:
    """Spin's rule for component ids (`KebabId`, spin crates/serde/src/id.rs): words of ASCII letters
    and digits separated by `-`, each starting with a letter, all lowercase."""
    if not ident:
        return "is empty"
    if "_" in ident:
        return "words must be separated with '-', not '_'"
    for word in ident.split("-"):
        if not word:
            return "'-'-separated words must not be empty"
        if not word[0].isascii() or not word[0].isalpha():
            return f"'-'-separated words must start with an ASCII letter; got {word[0]!r}"
        if not all(c.isascii() and c.isalnum() for c in word):
            return f"'-'-separated words may only contain alphanumeric ASCII; got {word!r}"
        if word != word.lower():
            return f"identifiers must be all lowercase; got {ident!r}"
    return None


# The only keys the gate's component has: anything else would grant it something (outbound hosts,
# files, variables, environment, stores, models, dependencies) or build it differently.
SPIN_COMPONENT_KEYS = {"source", "description"}


def spin_problems(text: str) -> list[str]:
    """deploy/spin.toml's text: TOML, Spin's manifest schema, Spin's parser rules, this deployment."""
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        return [f"not TOML: {e}"]
    problems = schema_problems(SPIN_SCHEMA, doc)

    # Spin's parser reads version 2 only (`FixedVersion<2>`, spin crates/manifest/src/schema/v2.rs);
    # the vendored schema's `spin_manifest_version` accepts any unsigned integer.
    if doc.get("spin_manifest_version") != 2 or type(doc.get("spin_manifest_version")) is not int:
        problems.append(
            f"spin_manifest_version is {doc.get('spin_manifest_version')!r}, not 2 (Spin's FixedVersion<2>)"
        )
    components = doc.get("component")
    components = components if isinstance(components, dict) else {}
    for ident in components:
        if why := spin_id_problem(ident):
            problems.append(f"component id {ident!r}: {why} (Spin's KebabId rule)")
    triggers = doc.get("trigger", {}).get("http") if isinstance(doc.get("trigger"), dict) else None
    triggers = triggers if isinstance(triggers, list) else []
    for i, trigger in enumerate(triggers):
        named = trigger.get("component") if isinstance(trigger, dict) else None
        if isinstance(named, str) and named not in components:
            problems.append(f"trigger.http[{i}] names component {named!r}, which is not defined")

    # This deployment: one HTTP trigger on every path, one component, the gate's file, nothing granted.
    kinds = sorted(doc["trigger"]) if isinstance(doc.get("trigger"), dict) else []
    if kinds != ["http"]:
        problems.append(f"expected http triggers only; found {kinds}")
    routes = [(t.get("route"), t.get("component")) for t in triggers if isinstance(t, dict)]
    if routes != [("/...", SPIN_COMPONENT_ID)]:
        problems.append(f"expected one http trigger, route '/...' to {SPIN_COMPONENT_ID!r}; found {routes}")
    if list(components) != [SPIN_COMPONENT_ID]:
        problems.append(f"expected the one component {SPIN_COMPONENT_ID!r}; found {list(components)}")
    gate = components.get(SPIN_COMPONENT_ID)
    if isinstance(gate, dict):
        if gate.get("source") != COMPONENT_FILE:
            problems.append(
                f"component source is {gate.get('source')!r}, not {COMPONENT_FILE!r} (what `{WRITE_COMMAND}` writes)"
            )
        if extra := sorted(set(gate) - SPIN_COMPONENT_KEYS):
            problems.append(f"the component is granted or given {extra}: it gets nothing but the request")
    if "variables" in doc:
        problems.append("application variables are defined: the gate reads none")
    return problems


def spin_runtime_config_problems(text: str, memory_bytes: int) -> list[str]:
    """deploy/runtime-config.toml: only `max_instance_memory` (Spin's runtime config key, spin
    crates/runtime-config/src/lib.rs), equal to the host's per-call memory limit."""
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        return [f"not TOML: {e}"]
    problems = []
    if set(doc) != {"max_instance_memory"}:
        problems.append(f"expected only max_instance_memory; found {sorted(doc)}")
    value = doc.get("max_instance_memory")
    if type(value) is not int or value != memory_bytes:
        problems.append(f"max_instance_memory is {value!r}, not the host's limit {memory_bytes}")
    return problems


# ---- wasmCloud (wadm) ----------------------------------------------------------------------------

# wadm crates/wadm-types/src/lib.rs: the trait types whose properties have a type of their own.
WADM_TYPED_TRAITS = {
    "link": "#/definitions/LinkProperty",
    "spreadscaler": "#/definitions/SpreadScalerProperty",
    "daemonscaler": "#/definitions/SpreadScalerProperty",
}
# wadm crates/wadm-types/src/validation.rs: interfaces a wasmCloud host provides, per namespace and package.
WADM_KNOWN_INTERFACES = {
    ("wasi", "http"): {"incoming-handler", "outgoing-handler"},
    ("wrpc", "http"): {"incoming-handler", "outgoing-handler"},
}
WADM_NAME = re.compile(r"^[-\w]+$")


def _dns_subdomain(s: str) -> bool:
    return 0 < len(s) <= 253 and all(
        0 < len(p) <= 63
        and p[0].isascii()
        and p[0].isalpha()
        and p[-1].isascii()
        and p[-1].isalnum()
        and all(c.isascii() and (c.isalnum() or c == "-") for c in p)
        for p in s.split(".")
    )


def _label_name(s: str) -> bool:
    return (
        0 < len(s) <= 63
        and s[0].isascii()
        and s[0].isalnum()
        and s[-1].isascii()
        and s[-1].isalnum()
        and all(c.isascii() and (c.isalnum() or c in "-_.") for c in s)
    )


def _oam_key(key: str) -> bool:
    prefix, slash, name = key.partition("/")
    return _dns_subdomain(prefix) and _label_name(name) if slash else _label_name(key)


def wadm_problems(text: str) -> list[str]:
    """deploy/wadm.yaml's text: YAML, wadm's OAM schema, wadm's validation rules, this deployment."""
    try:
        doc = yaml.safe_load(text)
    except yaml.YAMLError as e:
        return [f"not YAML: {e}"]
    problems = schema_problems(WADM_SCHEMA, doc)
    if not isinstance(doc, dict):
        return problems or ["the document is not a mapping"]

    if doc.get("apiVersion") != "core.oam.dev/v1beta1" or doc.get("kind") != "Application":
        problems.append(
            f"apiVersion/kind are {doc.get('apiVersion')!r}/{doc.get('kind')!r}, "
            "not 'core.oam.dev/v1beta1'/'Application'"
        )
    meta = doc.get("metadata") if isinstance(doc.get("metadata"), dict) else {}
    name = meta.get("name")
    if isinstance(name, str) and not WADM_NAME.match(name):
        problems.append(f"manifest name {name!r} does not match {WADM_NAME.pattern} (wadm's rule)")
    for field in ("annotations", "labels"):
        entries = meta.get(field) if isinstance(meta.get(field), dict) else {}
        problems += [f"metadata.{field}: {k!r} is not a valid OAM key" for k in entries if not _oam_key(str(k))]
    annotations = meta.get("annotations") if isinstance(meta.get("annotations"), dict) else {}
    if annotations.get("version") == "latest":
        problems.append("metadata.annotations.version 'latest' is not allowed in wadm")

    spec = doc.get("spec") if isinstance(doc.get("spec"), dict) else {}
    components = [c for c in spec.get("components") or [] if isinstance(c, dict)]
    names = [c.get("name") for c in components]
    problems += [f"duplicate component name {n!r}" for n in sorted({n for n in names if names.count(n) > 1}, key=str)]

    links = []  # (source component, link properties)
    for c in components:
        for i, t in enumerate(c.get("traits") or []):
            if not isinstance(t, dict) or t.get("type") not in WADM_TYPED_TRAITS:
                continue
            where = f"spec/components/{c.get('name')}/traits/{i} ({t.get('type')})/properties"
            typed = schema_problems(WADM_SCHEMA, t.get("properties"), WADM_TYPED_TRAITS[t["type"]], where)
            problems += typed
            if t["type"] == "link" and not typed:
                links.append((c, t["properties"]))
    for c, link in links:
        target = link["target"]["name"]
        if target not in names:
            problems.append(f"the link from {c.get('name')!r} targets {target!r}, which is not a listed component")
        known = WADM_KNOWN_INTERFACES.get((link["namespace"], link["package"]))
        for iface in link["interfaces"]:
            if known is not None and iface not in known:
                problems.append(f"unrecognized interface {link['namespace']}:{link['package']}/{iface}")

    # This deployment: the gate's component (the file the CLI writes, no links of its own) behind the
    # HTTP server provider, linked on wasi:http/incoming-handler with a listen address.
    gates = [c for c in components if c.get("type") == "component"]
    if [c.get("name") for c in gates] != [WADM_COMPONENT_NAME]:
        problems.append(f"expected the one component {WADM_COMPONENT_NAME!r}; found {[c.get('name') for c in gates]}")
    else:
        image = (gates[0].get("properties") or {}).get("image")
        if image != f"file://./{COMPONENT_FILE}":
            problems.append(
                f"the component's image is {image!r}, not 'file://./{COMPONENT_FILE}' (what `{WRITE_COMMAND}` writes)"
            )
        if any(src is gates[0] for src, _ in links):
            problems.append("the gate's component has links of its own: it imports nothing but HTTP")
    http = [
        (src, link)
        for src, link in links
        if src.get("type") == "capability"
        and link["target"]["name"] == WADM_COMPONENT_NAME
        and (link["namespace"], link["package"], link["interfaces"]) == ("wasi", "http", ["incoming-handler"])
    ]
    if len(http) != 1:
        problems.append(
            f"expected one link from a capability provider to {WADM_COMPONENT_NAME!r} on "
            f"wasi:http/incoming-handler; found {len(http)}"
        )
    else:
        configs = (http[0][1].get("source") or {}).get("config") or []
        addresses = [v for cfg in configs for k, v in (cfg.get("properties") or {}).items() if k.lower() == "address"]
        if len(addresses) != 1:
            problems.append("the HTTP server link's source config must give one listen `address`")
    return problems
