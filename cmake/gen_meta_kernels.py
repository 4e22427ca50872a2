"""Generates the list of LibTorch's own (C++) meta kernels, as typed
registrations, for src/torch_passes/cpp_meta_kernels.cpp.

In a Python process, `import torch` replaces the C++ meta kernels of about
1,300 operators with Python ones (torch/_meta_registrations.py). The example
run of an export runs the model on the meta device: through the Python
kernels, every operator costs a trip into Python, and the first elementwise
one imports torch._dynamo (seconds). The C++ kernels are still in LibTorch, as
`at::meta::<op>` functions; this script pairs each operator's registration
signature (ATen/RegistrationDeclarations.h: the schema and the unboxed C++
signature) with the `at::meta` function of exactly the same parameter types
(ATen/ops/<op>_meta_dispatch.h), and writes one registration per pair, into
the torch::Library `m`:

    m.impl("add.Tensor", [](const at::Tensor& a0, ...) -> at::Tensor { return at::meta::add(a0, ...); });

Only functions that libtorch_cpu exports are used (`nm -DC`: some meta
functions are declared in the headers but not defined).

Usage: gen_meta_kernels.py <LibTorch include dir> <libtorch_cpu.so> <output .inc>
"""
import json
import os
import re
import subprocess
import sys

DECL = re.compile(r"^(?P<ret>.+?)\s+(?P<name>\w+)\((?P<params>.*)\);\s*//\s*(?P<meta>\{.*\})\s*$")
META_DECL = re.compile(r"^TORCH_API\s+(?P<ret>.+?)\s+(?P<name>\w+)\((?P<params>.*)\);\s*$")


def split_params(text):
    """Top-level comma split (templates and parentheses nest)."""
    out, depth, cur = [], 0, ""
    for c in text:
        if c in "<([{":
            depth += 1
        elif c in ">)]}":
            depth -= 1
        if c == "," and depth == 0:
            out.append(cur.strip())
            cur = ""
        else:
            cur += c
    if cur.strip():
        out.append(cur.strip())
    return out


def param_type(param):
    """The type of a parameter declaration ("const at::Tensor & self=1" -> "const at::Tensor &")."""
    param = param.split("=", 1)[0].strip()
    m = re.match(r"^(.*?[\s&*>])(\w+)$", param)
    if not m:
        return None
    return normalize(m.group(1))


def normalize(t):
    t = re.sub(r"\s+", " ", t.strip())
    t = re.sub(r"\s*([&*<>,])\s*", r"\1", t)
    t = t.replace("::std::", "std::").replace("c10::optional", "std::optional")
    return t


def meta_functions(include, base, cache={}):
    """{name: [(return type, [param types])]} of ATen/ops/<base>_meta_dispatch.h."""
    if base in cache:
        return cache[base]
    found = {}
    path = os.path.join(include, "ATen", "ops", f"{base}_meta_dispatch.h")
    if os.path.exists(path):
        with open(path) as f:
            for line in f:
                m = META_DECL.match(line.strip())
                if not m:
                    continue
                types = [param_type(p) for p in split_params(m.group("params"))]
                if None in types:
                    continue
                found.setdefault(m.group("name"), []).append((normalize(m.group("ret")), types))
    cache[base] = found
    return found


def exported(library):
    """{(name, parameter count)} of the at::meta functions `library` defines."""
    out = subprocess.run(["nm", "-DC", "--defined-only", library], check=True, capture_output=True, text=True).stdout
    found = set()
    for line in out.splitlines():
        m = re.search(r" at::meta::(\w+)\((.*)\)$", line)
        if m:
            found.add((m.group(1), len(split_params(m.group(2)))))
    return found


def main(include, library, output):
    defined = exported(library)
    decls = os.path.join(include, "ATen", "RegistrationDeclarations.h")
    lines = []
    if os.path.exists(decls):
        with open(decls) as f:
            for line in f:
                m = DECL.match(line.strip())
                if not m:
                    continue
                schema = json.loads(m.group("meta"))["schema"]
                op = schema.split("(", 1)[0]
                if not op.startswith("aten::"):
                    continue
                qualified = op[len("aten::"):]  # add.Tensor
                base = qualified.split(".", 1)[0].rstrip("_")
                if not base:
                    continue
                params = split_params(m.group("params"))
                types = [param_type(p) for p in params]
                if None in types:
                    continue
                ret = normalize(m.group("ret"))
                name = m.group("name")
                funcs = meta_functions(include, base)
                # out= variants: the meta function in dispatcher order is <name>f (add_outf)
                candidates = [name + "f", name] if name.endswith("_out") else [name]
                candidates += [c + "_symint" for c in candidates] + [name.replace("_out", "_symint_outf")]
                target = None
                for cand in candidates:
                    for r, t in funcs.get(cand, []):
                        if t == types and r == ret and (cand, len(types)) in defined:
                            target = cand
                            break
                    if target:
                        break
                if not target:
                    continue
                decl_params = ", ".join(f"{t} a{i}" for i, t in enumerate(types))
                call_args = ", ".join(f"a{i}" for i in range(len(types)))
                lines.append(f'm.impl("{qualified}", []({decl_params}) -> {ret} {{ return at::meta::{target}({call_args}); }});')
    os.makedirs(os.path.dirname(os.path.abspath(output)), exist_ok=True)
    text = "// @generated by cmake/gen_meta_kernels.py from " + decls + "\n" + "\n".join(lines) + "\n"
    old = open(output).read() if os.path.exists(output) else None
    if old != text:
        with open(output, "w") as f:
            f.write(text)
    print(f"gen_meta_kernels: {len(lines)} C++ meta kernels")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], sys.argv[3])
