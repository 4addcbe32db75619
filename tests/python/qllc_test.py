"""tests/python/qllc_test.py: the qllc Python package (python/qllc), run by python_test.sh against an
installed prefix (PYTHONPATH = its site directory).

Expected outputs come from the `qllc` tool ($QLLC: `qllc run`, `qllc profile`, the same library through
another door, which must give the same bits), from numpy references committed under tests/cli/data (made
by make_models.py), and from a bundle linked by gcc (tests/cli/data/bundle_main.c).
"""
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import unittest
import warnings

import numpy as np

import qllc

QLLC = os.environ["QLLC"]
SRC = os.environ["QLLC_SOURCE_DIR"]
DATA = os.path.join(SRC, "tests", "cli", "data")
DIGITS = os.path.join(SRC, "models", "digits")
MODEL = os.path.join(DIGITS, "digits.onnx")


def cli(*args, cwd=None):
    r = subprocess.run([QLLC, *args], capture_output=True, text=True, cwd=cwd)
    if r.returncode != 0:
        raise AssertionError(f"qllc {' '.join(args)}: exit {r.returncode}: {r.stderr}")
    return r.stdout


class Base(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="qllc-py-test-")

    def tearDown(self):
        shutil.rmtree(self.tmp, True)

    def path(self, *p):
        return os.path.join(self.tmp, *p)

    def cli_run(self, model, inputs, *opts):
        out = self.path("cli_out")
        shutil.rmtree(out, True)
        cli("run", model, *[a for i in inputs for a in ("--input", i)], "--output-dir", out, *opts)
        return out

    def assert_same_bits(self, a, b):
        self.assertEqual(a.dtype, b.dtype)
        self.assertEqual(a.shape, b.shape)
        self.assertEqual(a.tobytes(), b.tobytes())


class PackageTest(Base):
    def test_loads_the_prefix_library(self):
        self.assertEqual(qllc.version(), cli("--version").split()[1])
        prefix = os.environ.get("QLLC_PREFIX")
        if prefix:  # the installed package loads the installed library, not the build tree's
            self.assertTrue(os.path.realpath(qllc._capi.lib._name).startswith(os.path.realpath(prefix)),
                            qllc._capi.lib._name)

    def test_model_inputs_outputs(self):
        m = qllc.load(os.path.join(DATA, "two_io.onnx"))
        self.assertEqual([(i.name, i.shape, i.dtype) for i in m.inputs],
                         [("a", (2, 3), np.float32), ("b", (2, 3), np.float32)])
        self.assertEqual([o.name for o in m.outputs], ["sum:0", "out/relu"])
        self.assertIn("two_io.onnx", repr(m))

    def test_shapes(self):
        m = qllc.load(MODEL, shapes={"input": (1, 1, 8, 8)})  # the model's own shape: accepted
        self.assertEqual(m.inputs[0].shape, (1, 1, 8, 8))
        with self.assertRaises(qllc.Error) as e:  # a fixed dim given another size
            qllc.load(MODEL, shapes={"input": (4, 1, 8, 8)})
        self.assertEqual(e.exception.status, "QLLC_ERR_INVALID")
        self.assertIn("input: axis 0 is 1 in the model, 4 given", str(e.exception))
        with self.assertRaises(qllc.Error) as e:
            qllc.load(MODEL, shapes={"nope": (1,)})
        self.assertIn("nope", str(e.exception))
        # a dynamic-batch export (tests/cli/data/shapes, made by torch) at batch 4, against torch's output
        shapes_dir = os.path.join(DATA, "shapes")
        x4 = np.load(os.path.join(shapes_dir, "dynbatch_x4.npy"))
        ref = np.load(os.path.join(shapes_dir, "dynbatch_y4_ref.npy"))
        m4 = qllc.load(os.path.join(shapes_dir, "dynbatch.onnx"), shapes={"x": x4.shape})
        self.assertEqual(m4.inputs[0].shape, x4.shape)
        y = m4.jit()(x4)[0]
        self.assertEqual(y.shape, ref.shape)
        np.testing.assert_allclose(y, ref, rtol=1e-5, atol=1e-4)
        with self.assertWarns(qllc.Note):  # no shape: the symbolic batch is taken as 1, and said so
            m1 = qllc.load(os.path.join(shapes_dir, "dynbatch.onnx"))
        self.assertEqual(m1.inputs[0].shape[0], 1)
        with self.assertRaises(qllc.Error):  # a dynamic sequence length must be given
            qllc.load(os.path.join(shapes_dir, "dynseq.onnx"))
        m7 = qllc.load(os.path.join(shapes_dir, "dynseq.onnx"), shapes={"x": (1, 7, 16)})
        self.assertEqual(m7.inputs[0].shape, (1, 7, 16))


class ErrorTest(Base):
    def test_load_errors_carry_file_and_node(self):
        with self.assertRaises(qllc.Error) as e:
            qllc.load(os.path.join(DATA, "no_such_model.onnx"))
        self.assertEqual(e.exception.status, "QLLC_ERR_IO")
        self.assertTrue(e.exception.file.endswith("no_such_model.onnx"))
        with self.assertRaises(qllc.Error) as e:
            qllc.load(os.path.join(DATA, "unsupported.onnx"))
        self.assertEqual(e.exception.status, "QLLC_ERR_UNSUPPORTED")
        self.assertEqual(e.exception.node, "logsoftmax_node")
        self.assertIn("unsupported.onnx", str(e.exception))
        self.assertIn("logsoftmax_node", str(e.exception))

    def test_option_and_run_errors(self):
        m = qllc.load(os.path.join(DATA, "small.onnx"))
        with self.assertRaises(qllc.Error) as e:
            m.jit(precision="int4")
        self.assertIn("valid: float, int8, int16", str(e.exception))
        with self.assertRaises(TypeError):
            m.jit(no_such_option=1)
        with self.assertRaises(qllc.Error) as e:  # int8 without a profile: the library's own message
            m.jit(precision="int8")
        self.assertIn("profile", e.exception.message)
        with self.assertRaises(qllc.Error):
            m.jit(profile=self.path("missing.yaml"))
        jit = m.jit()
        with self.assertRaises(qllc.Error) as e:  # a wrong shape: the library refuses it, naming the input
            jit.run({"x": np.zeros((1, 2, 5, 4), np.float32)})
        self.assertEqual(e.exception.status, "QLLC_ERR_INVALID")
        self.assertIn("'x'", e.exception.message)
        with self.assertRaises(qllc.Error):
            jit.run({"nope": np.zeros((1, 2, 5, 5), np.float32)})
        with self.assertRaises(qllc.Error) as e:  # a profile of another model
            qllc.load(os.path.join(DATA, "two_io.onnx")).profile(np.zeros((3, 1, 2, 5, 5), np.float32))
        with self.assertRaises(qllc.Error) as e:
            m.compile(self.path("out"), name="int")  # a C keyword
        self.assertIn("keyword", str(e.exception))
        self.assertFalse(os.path.exists(self.path("out", "int.o")))


class JitTest(Base):
    def test_float_equals_qllc_run_and_numpy(self):
        model, x_path = os.path.join(DATA, "small.onnx"), os.path.join(DATA, "small_x.npy")
        x = np.load(x_path)
        jit = qllc.load(model).jit()
        self.assertEqual([(i.name, i.shape) for i in jit.inputs], [("x", (1, 2, 5, 5))])
        outs = jit.run({"x": x})
        self.assertEqual(list(outs), ["y"])
        self.assert_same_bits(outs["y"], np.load(os.path.join(self.cli_run(model, [x_path]), "y.npy")))
        np.testing.assert_allclose(outs["y"], np.load(os.path.join(DATA, "small_y_ref.npy")), rtol=1e-5, atol=1e-5)
        (y,) = jit(x)
        self.assert_same_bits(y, outs["y"])
        self.assertFalse(y.flags.owndata)  # the library's output memory, not a copy
        # a float64, non-contiguous input is converted
        y2 = jit(np.asfortranarray(x.astype(np.float64)))[0]
        self.assert_same_bits(y2, y)

    def test_two_inputs_by_name_and_position(self):
        model = os.path.join(DATA, "two_io.onnx")
        a, b = np.load(os.path.join(DATA, "two_io_a.npy")), np.load(os.path.join(DATA, "two_io_b.npy"))
        jit = qllc.load(model).jit()
        by_name = jit.run({"b": b, "a": a})
        s, r = jit(a, b)
        self.assert_same_bits(by_name["sum:0"], s)
        self.assert_same_bits(by_name["out/relu"], r)
        np.testing.assert_array_equal(s, np.load(os.path.join(DATA, "two_io_sum_ref.npy")))
        np.testing.assert_array_equal(r, np.load(os.path.join(DATA, "two_io_relu_ref.npy")))

    def test_int8_equals_qllc_run(self):
        calib = np.load(os.path.join(DIGITS, "calib_x.npy"))
        sample = os.path.join(DIGITS, "sample_0.npy")
        m = qllc.load(MODEL)
        prof = m.profile(calib)
        self.assertEqual(prof.samples, len(calib))
        prof.save(self.path("p.yaml"))
        for prec in ("int8", "int16"):
            jit = m.jit(precision=prec, profile=qllc.load_profile(self.path("p.yaml")))
            got = jit.run({"input": np.load(sample)})["logits"]
            want = np.load(os.path.join(self.cli_run(MODEL, [sample], "--profile", self.path("p.yaml"),
                                                     "--precision", prec), "logits.npy"))
            self.assert_same_bits(got, want)
        # quantized_io: integer in and out, scale and zero point in the descriptions
        jit = m.jit(precision="int8", profile=prof, quantized_io=True)
        i, o = jit.inputs[0], jit.outputs[0]
        self.assertEqual((i.dtype, o.dtype), (np.int8, np.int8))
        self.assertNotEqual(o.scale, 1.0)
        q = np.clip(np.round(np.load(sample) / i.scale) + i.zero_point, -128, 127).astype(np.int8)
        np.save(self.path("q.npy"), q)
        want = np.load(os.path.join(self.cli_run(MODEL, [self.path("q.npy")], "--profile", self.path("p.yaml"),
                                                 "--precision", "int8", "--quantized-io"), "logits.npy"))
        self.assert_same_bits(jit(q)[0], want)
        with self.assertRaises(qllc.Error) as e:  # float data for an int8 input is not silently truncated
            jit(np.load(sample))
        self.assertIn("float32", str(e.exception))
        jit.close()
        with self.assertRaises(qllc.Error) as e:
            jit(q)
        self.assertIn("closed", str(e.exception))

    def test_threads_share_a_jit(self):
        m = qllc.load(MODEL)
        jit = m.jit(precision="int8", profile=m.profile(np.load(os.path.join(DIGITS, "calib_x.npy"))))
        xs = np.load(os.path.join(DIGITS, "test_x.npy"))[:40]
        want = [jit(x[None])[0].tobytes() for x in xs]
        got, errors = [None] * 2, []

        def work(t):
            try:
                got[t] = [jit(x[None])[0].tobytes() for x in xs for _ in range(3)][::3]
            except Exception as e:  # noqa: BLE001 - reported below
                errors.append(e)

        threads = [threading.Thread(target=work, args=(t,)) for t in range(2)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        self.assertEqual(errors, [])
        self.assertEqual(got, [want, want])

    def test_gil_released_during_library_calls(self):
        # The library reads the model from a FIFO: the call blocks in open() until another Python thread
        # writes it. Were the GIL held during the call, that thread could never run: this would hang (and
        # the subprocess's timeout fails the test).
        fifo = self.path("model.onnx")
        os.mkfifo(fifo)
        code = f"""
import threading, qllc
def feed():
    with open({fifo!r}, "wb") as f, open({MODEL!r}, "rb") as m:
        f.write(m.read())
t = threading.Thread(target=feed)
t.start()
m = qllc.load({fifo!r})
t.join()
print(m.outputs[0].name)
"""
        r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.stdout.strip(), "logits")


class ProfileTest(Base):
    def test_numpy_profile_is_qllc_profile(self):
        calib_path = os.path.join(DIGITS, "calib_x.npy")
        calib = np.load(calib_path)
        cli("profile", MODEL, "--dataset", calib_path, "-o", self.path("cli.yaml"))
        with open(self.path("cli.yaml")) as f:
            want = f.read()
        m = qllc.load(MODEL)
        seen = []
        forms = {
            "array": calib,
            "dict": {"input": calib},
            "iterable of dicts": ({"input": x} for x in calib),
            "iterable of arrays": iter(list(calib)),
            "path": calib_path,
        }
        for what, samples in forms.items():
            prof = m.profile(samples, progress=lambda done, total: seen.append((done, total)))
            self.assertEqual(prof.text, want, what)
            self.assertEqual((prof.samples, seen[-1]), (256, (256, 256)), what)
        # a loaded profile works as a path or a Profile
        prof.save(self.path("p.yaml"))
        self.assertEqual(qllc.load_profile(self.path("p.yaml")).text, want)
        with self.assertRaises(qllc.Error):
            qllc.load_profile(self.path("none.yaml"))
        with self.assertRaises(qllc.Error) as e:
            m.profile([])
        with self.assertRaises(qllc.Error) as e:  # the library's message: the wrong sample shape
            m.profile(np.zeros((4, 3, 3), np.float32))
        self.assertIn("input", e.exception.message)
        with self.assertRaises(qllc.Error):
            m.profile(calib, bins=7)

    def test_profile_of_another_model_is_refused(self):
        small = qllc.load(os.path.join(DATA, "small.onnx"))
        prof = small.profile(np.load(os.path.join(DATA, "small_x.npy"))[None].repeat(3, 0))
        with self.assertRaises(qllc.Error) as e:
            qllc.load(MODEL).jit(precision="int8", profile=prof)
        self.assertEqual(e.exception.status, "QLLC_ERR_MISMATCH")


class CompareInfoTest(Base):
    def test_compare_rows(self):
        m = qllc.load(MODEL)
        calib = np.load(os.path.join(DIGITS, "calib_x.npy"))
        prof = m.profile(calib)
        prof.save(self.path("p.yaml"))
        test_x = np.load(os.path.join(DIGITS, "test_x.npy"))[:50]
        rows = m.compare(test_x, precision="int8", profile=prof)
        self.assertEqual((rows.samples, rows.drawn), (50, False))
        self.assertTrue(rows[0].is_output)
        self.assertEqual(rows.outputs[0].value, "logits")
        others = [r.sqnr_db for r in rows if not r.is_output]
        self.assertEqual(others, sorted(others))  # worst first
        np.save(self.path("test_x.npy"), test_x)
        cli("compare", MODEL, "--profile", self.path("p.yaml"), "--precision", "int8", "--dataset",
            self.path("test_x.npy"), "--csv", self.path("c.csv"))
        with open(self.path("c.csv")) as f:
            lines = f.read().splitlines()[1:]
        self.assertEqual(len(lines), len(rows))
        for line, r in zip(lines, rows):
            cols = line.split(",")
            self.assertEqual(cols[0].strip('"'), r.value)
            self.assertAlmostEqual(float(cols[8]), r.sqnr_db, places=5)
        kept = m.compare(precision="int16", profile=prof, max_samples=8)  # the profile's calibration samples
        self.assertEqual((kept.samples, kept.drawn, kept.kept), (8, False, True))
        with self.assertRaises(qllc.Error):
            m.compare(test_x)  # no precision

    def test_info_and_dot(self):
        m = qllc.load(MODEL)
        prof = m.profile(np.load(os.path.join(DIGITS, "calib_x.npy")))
        prof.save(self.path("p.yaml"))
        text = m.info(precision="int8", profile=prof, target="aarch64")
        self.assertEqual(text, cli("info", MODEL, "--precision", "int8", "--profile", self.path("p.yaml"),
                                   "--target", "aarch64"))
        dot = m.dot(precision="int8", profile=prof)
        self.assertTrue(dot.startswith("digraph"), dot[:40])
        self.assertEqual(dot, cli("info", MODEL, "--precision", "int8", "--profile", self.path("p.yaml"), "--dot", "-"))


class CompileTest(Base):
    def test_bundle_links_and_runs(self):
        m = qllc.load(MODEL)
        prof = m.profile(np.load(os.path.join(DIGITS, "calib_x.npy")))
        sample = os.path.join(DIGITS, "sample_0.npy")
        want = m.jit(precision="int8", profile=prof).run({"input": np.load(sample)})["logits"]
        with warnings.catch_warnings(record=True) as notes:
            warnings.simplefilter("always")
            b = m.compile(self.path("out"), name="net", precision="int8", profile=prof)
        # the library's notes (e.g. the default generic CPU on a faster host) are the tool's, as warnings
        prof.save(self.path("p.yaml"))
        r = subprocess.run([QLLC, "compile", MODEL, "--profile", self.path("p.yaml"), "--precision", "int8", "-o",
                            self.path("cli_out")], capture_output=True, text=True)
        self.assertEqual([str(n.message) for n in notes if n.category is qllc.Note],
                         [line[len("qllc: note: "):] for line in r.stderr.splitlines() if line.startswith("qllc: note: ")])
        self.assertEqual(b, qllc.Bundle(self.path("out", "net.o"), self.path("out", "net.h"), None))
        exe = self.path("driver")
        subprocess.run(["gcc", "-O2", "-DBUNDLE=net", '-DBUNDLE_HEADER="net.h"', "-I", self.path("out"),
                        os.path.join(DATA, "bundle_main.c"), b.object, "-o", exe], check=True)
        subprocess.run([exe, "-", sample, self.path("y.npy")], check=True)
        self.assert_same_bits(np.load(self.path("y.npy")), want)
        # the default name is the model file's stem, as `qllc compile` makes it
        self.assertEqual(m.compile(self.path("out2")).object, self.path("out2", "digits.o"))

    def test_aarch64_bundle(self):
        m = qllc.load(MODEL)
        prof = m.profile(np.load(os.path.join(DIGITS, "calib_x.npy")))
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # a named CPU: no note
            b = m.compile(self.path("arm"), name="net", precision="int8", profile=prof, target="aarch64",
                          cpu="cortex-a76", weights="file")
        with open(b.object, "rb") as f:
            elf = f.read(20)
        self.assertEqual((elf[:4], int.from_bytes(elf[18:20], "little")), (b"\x7fELF", 183))  # EM_AARCH64
        self.assertTrue(os.path.exists(b.weights))
        with self.assertRaises(qllc.Error) as e:
            m.compile(self.path("bad"), precision="int8", profile=prof, target="aarch64", cpu="no-such-cpu")
        self.assertIn("no-such-cpu", str(e.exception))
        self.assertFalse(os.path.exists(self.path("bad", "digits.o")))


if __name__ == "__main__":
    unittest.main(verbosity=2)
