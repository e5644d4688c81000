/* CRC-32C (Castagnoli), the checksum of every TFRecord frame (TensorBoard's event files). Python has
   no CRC-32C of its own and TensorBoard's pure-Python one reads ~1 MB/s; a million-step event file
   is 100 MB. Table-driven, one byte a step; the GIL is released over large buffers. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>

static uint32_t table[256];

static void init_table(void) {
    for (uint32_t i = 0; i < 256; i++) {
        uint32_t c = i;
        for (int k = 0; k < 8; k++) c = (c & 1) ? (c >> 1) ^ 0x82F63B78u : c >> 1;
        table[i] = c;
    }
}

static PyObject *crc32c(PyObject *Py_UNUSED(self), PyObject *arg) {
    Py_buffer view;
    if (PyObject_GetBuffer(arg, &view, PyBUF_SIMPLE) < 0) return NULL;
    const unsigned char *p = view.buf;
    uint32_t c = 0xFFFFFFFFu;
    Py_BEGIN_ALLOW_THREADS
    for (Py_ssize_t i = 0; i < view.len; i++) c = table[(c ^ p[i]) & 0xFF] ^ (c >> 8);
    Py_END_ALLOW_THREADS
    PyBuffer_Release(&view);
    return PyLong_FromUnsignedLong(c ^ 0xFFFFFFFFu);
}

static PyMethodDef methods[] = {
    {"crc32c", crc32c, METH_O, "crc32c(bytes-like) -> int: the CRC-32C of the buffer."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, .m_name = "_crc32c", .m_size = -1, .m_methods = methods};

PyMODINIT_FUNC PyInit__crc32c(void) {
    init_table();
    return PyModule_Create(&module);
}
