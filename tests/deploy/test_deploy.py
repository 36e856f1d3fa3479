"""deploy/spin.toml, deploy/runtime-config.toml and deploy/wadm.yaml: valid against the schemas their
projects publish and the rules their parsers apply; mutated copies refused; the component they name
is the one `mediagate component --world http-gate` writes. See manifests.py for the checks."""

import hashlib
import os
import runpy
import tomllib

import pytest
import yaml

import manifests
from component import written_component
from manifests import DEPLOY, ROOT, SCHEMAS, WRITE_COMMAND

SPIN = DEPLOY / "spin.toml"
RUNTIME_CONFIG = DEPLOY / "runtime-config.toml"
WADM = DEPLOY / "wadm.yaml"


def host_memory_bytes() -> int:
    """The CLI host's per-call memory limit: the facts generated from lib/src/facts.rs (read by
    path: this suite's venv has no Python host installed, and the module imports nothing)."""
    facts = runpy.run_path(str(ROOT / "hosts/python/mediagate_host/facts.py"))
    return facts["MEMORY_LIMIT_BYTES"]


# ---- the vendored schemas are the published files ----------------------------------------------


def test_vendored_schemas_are_the_published_files_named_in_their_readme():
    readme = (SCHEMAS / "README.md").read_text()
    for name in (manifests.SPIN_SCHEMA, manifests.WADM_SCHEMA):
        row = next((line for line in readme.splitlines() if line.startswith(f"| `{name}`")), None)
        assert row, f"deploy/schemas/README.md has no row for {name}"
        digest = hashlib.sha256((SCHEMAS / name).read_bytes()).hexdigest()
        assert f"`{digest}`" in row, f"{name} differs from the published file its README row names (sha256 {digest})"
        schema = manifests.schema(name)
        assert schema["$schema"] == "http://json-schema.org/draft-07/schema#"


# ---- the manifests as they are -------------------------------------------------------------------


def test_spin_manifest_passes_spins_schema_and_rules():
    assert manifests.spin_problems(SPIN.read_text()) == []


def test_spin_runtime_config_limits_memory_as_the_cli_host_does():
    assert manifests.spin_runtime_config_problems(RUNTIME_CONFIG.read_text(), host_memory_bytes()) == []


def test_wadm_manifest_passes_wadms_schema_and_rules():
    assert manifests.wadm_problems(WADM.read_text()) == []


def test_the_documented_commands_name_the_manifests_component_file():
    """docs/serving.md and the manifests' own comments write the component where the manifests read it."""
    serving = (ROOT / "docs/serving.md").read_text()
    for text, where in ((serving, "docs/serving.md"), (SPIN.read_text(), "spin.toml"), (WADM.read_text(), "wadm.yaml")):
        assert WRITE_COMMAND in text, f"{where} does not give `{WRITE_COMMAND}`"
    assert "spin up -f deploy/spin.toml" in serving
    assert "wash app deploy wadm.yaml" in serving


# ---- mutated copies are refused --------------------------------------------------------------------


def mutate(text: str, old: str, new: str) -> str:
    assert text.count(old) == 1, f"the mutation's anchor {old!r} is not in the manifest exactly once"
    return text.replace(old, new)


# (name, old, new, a fragment of the problem expected, whether Spin's schema alone refuses it)
SPIN_MUTATIONS = [
    (
        "manifest version 3",
        "spin_manifest_version = 2",
        "spin_manifest_version = 3",
        "not 2 (Spin's FixedVersion<2>)",
        False,
    ),
    (
        "manifest version a string",
        "spin_manifest_version = 2",
        'spin_manifest_version = "2"',
        "is not of type 'integer'",
        True,
    ),
    ("route missing", 'route = "/..."\n', "", "'route' is a required property", True),
    (
        "unknown component key",
        'source = "mediagate-http-gate.wasm"',
        'source = "mediagate-http-gate.wasm"\nmemory = 512',
        "Additional properties",
        True,
    ),
    ("source not a string", 'source = "mediagate-http-gate.wasm"', "source = 42", "source", True),
    ("application name missing", 'name = "mediagate"\n', "", "'name' is a required property", True),
    (
        "component id not kebab-case",
        "[component.mediagate-http-gate]",
        "[component.mediagate_http_gate]",
        "KebabId",
        False,
    ),
    (
        "trigger names a missing component",
        'component = "mediagate-http-gate"',
        'component = "gate"',
        "'gate', which is not defined",
        False,
    ),
    (
        "an outbound host granted",
        'source = "mediagate-http-gate.wasm"',
        'source = "mediagate-http-gate.wasm"\nallowed_outbound_hosts = ["https://*:*"]',
        "allowed_outbound_hosts",
        False,
    ),
    (
        "a file mounted",
        'source = "mediagate-http-gate.wasm"',
        'source = "mediagate-http-gate.wasm"\nfiles = ["/etc/**"]',
        "'files'",
        False,
    ),
    ("another component file", 'source = "mediagate-http-gate.wasm"', 'source = "gate.wasm"', "not 'mediagate", False),
    (
        "a redis trigger",
        "[component.mediagate-http-gate]",
        '[[trigger.redis]]\nchannel = "images"\ncomponent = "mediagate-http-gate"\n\n[component.mediagate-http-gate]',
        "http triggers only",
        False,
    ),
    ("not TOML", "[application]", "[application", "not TOML", True),
]


def assert_refused(broken, text, problems_of, schema, load, unreadable, name, expected, by_schema):
    """`text` written to `broken` is refused by `problems_of` with a problem naming `expected`, and
    the project's schema alone refuses it exactly when `by_schema` (so the further rules are shown
    to be needed); `unreadable` names the mutation that breaks the syntax itself."""
    broken.write_text(text)
    problems = problems_of(broken.read_text())
    assert problems, f"{name}: the mutated manifest was accepted"
    assert any(expected in p for p in problems), f"{name}: no problem mentions {expected!r}: {problems}"
    if name != unreadable:
        schema_says = manifests.schema_problems(schema, load(broken.read_text()))
        assert bool(schema_says) == by_schema, f"{name}: the schema {'accepts' if by_schema else 'refuses'} it"


@pytest.mark.parametrize("name,old,new,expected,by_schema", SPIN_MUTATIONS, ids=[m[0] for m in SPIN_MUTATIONS])
def test_a_mutated_spin_manifest_is_refused(tmp_path, name, old, new, expected, by_schema):
    text = mutate(SPIN.read_text(), old, new)
    assert_refused(
        tmp_path / "spin.toml", text, manifests.spin_problems, manifests.SPIN_SCHEMA, tomllib.loads, "not TOML",
        name, expected, by_schema,
    )


WADM_MUTATIONS = [
    ("apiVersion missing", "apiVersion: core.oam.dev/v1beta1\n", "", "'apiVersion' is a required property", True),
    ("unknown component type", "type: component", "type: actor", "is not valid under any of the given schemas", True),
    (
        "unknown component property",
        "image: file://./mediagate-http-gate.wasm",
        "image: file://./mediagate-http-gate.wasm\n        memory: 512",
        "is not valid under any of the given schemas",
        True,
    ),
    ("annotations missing", "  annotations:\n    version: v0.1.0\n", "  labels:\n", "'annotations'", True),
    # The schema's trait properties also accept any custom object: wadm's typed traits catch these.
    ("link without namespace", "            namespace: wasi\n", "", "'namespace' is a required property", False),
    ("negative instances", "instances: 16", "instances: -1", "-1 is less than the minimum of 0", False),
    ("link to a missing component", "              name: http-gate\n", "              name: gate\n", "'gate'", False),
    ("misspelled interface", "[incoming-handler]", "[incoming-handlers]", "unrecognized interface", False),
    ("version latest", "version: v0.1.0", "version: latest", "'latest' is not allowed", False),
    ("manifest name with a space", "  name: mediagate\n", "  name: media gate\n", "does not match", False),
    (
        "another component file",
        "image: file://./mediagate-http-gate.wasm",
        "image: file://./gate.wasm",
        "not 'file://./mediagate",
        False,
    ),
    (
        "no listen address",
        "                    address: 127.0.0.1:8080\n",
        "                    port: '8080'\n",
        "listen `address`",
        False,
    ),
    ("not YAML", "interfaces: [incoming-handler]", "interfaces: [incoming-handler", "not YAML", True),
]


@pytest.mark.parametrize("name,old,new,expected,by_schema", WADM_MUTATIONS, ids=[m[0] for m in WADM_MUTATIONS])
def test_a_mutated_wadm_manifest_is_refused(tmp_path, name, old, new, expected, by_schema):
    text = mutate(WADM.read_text(), old, new)
    assert_refused(
        tmp_path / "wadm.yaml", text, manifests.wadm_problems, manifests.WADM_SCHEMA, yaml.safe_load, "not YAML",
        name, expected, by_schema,
    )


@pytest.mark.parametrize(
    "text,expected",
    [
        ("max_instance_memory = 268435456\n", "not the host's limit"),
        ('max_instance_memory = "512MiB"\n', "not the host's limit"),
        ("max_instance_memory = 536870912\nlog_dir = ''\n", "expected only max_instance_memory"),
        ("max_instance_memory = \n", "not TOML"),
    ],
)
def test_a_mutated_runtime_config_is_refused(text, expected):
    problems = manifests.spin_runtime_config_problems(text, host_memory_bytes())
    assert any(expected in p for p in problems), problems


# ---- the component file ------------------------------------------------------------------------------


def test_the_manifests_component_is_what_mediagate_component_writes(tmp_path):
    """`mediagate component --world http-gate --out FILE` writes a component exporting
    wasi:http/incoming-handler under the name both manifests read."""
    out = written_component(tmp_path)
    data = out.read_bytes()
    assert data[:8] == b"\0asm\x0d\x00\x01\x00", "the file is not a WebAssembly component (layer 1)"
    assert b"wasi:http/incoming-handler@0.2." in data, "the component does not name wasi:http/incoming-handler@0.2.x"
    # Both manifests read exactly that file name from deploy/ (checked in full by the manifest tests).
    assert manifests.spin_problems(SPIN.read_text()) == []
    assert manifests.wadm_problems(WADM.read_text()) == []
