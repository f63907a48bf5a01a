#!/usr/bin/env python3
"""Compares the device machine code of the kernels in two CUDA objects, without a disassembler.

Usage: compare_kernel_code.py BEFORE.o AFTER.o [--filter SUBSTRING]

nvcc embeds each sm_XX cubin (an ELF) uncompressed in the object's fatbin. Per kernel
(a .text.<mangled name> section) this prints its instructions (16 bytes each on sm_70 and
later), registers and stack frame bytes (the cubin's .nv.info attributes REGCOUNT and
FRAME_SIZE, what cuobjdump -res-usage shows; a frame means spills), static shared memory,
and whether the machine code is byte-identical, relocations (by symbol name) and
the kernel's parameter bank size included. Kernels only one object holds are listed
apart. Exit status 0 whatever differs: it reports, it does not judge.
"""
import hashlib
import struct
import sys

REGCOUNT, FRAME_SIZE = 0x2F, 0x11  # .nv.info attribute codes


def embedded_cubins(data):
    """Every ELF inside the object past its own header, cut to its section-header table's end."""
    cubins = []
    at = data.find(b"\x7fELF", 1)
    while at >= 0:
        shoff, = struct.unpack_from("<Q", data, at + 0x28)
        shentsize, shnum = struct.unpack_from("<HH", data, at + 0x3A)
        end = at + shoff + shentsize * shnum
        cubins.append(data[at:end])
        at = data.find(b"\x7fELF", end)
    return cubins


def sections(elf):
    shoff, = struct.unpack_from("<Q", elf, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", elf, 0x3A)
    headers = []
    for i in range(shnum):
        name, kind, flags, _, offset, size, link, info, _, entsize = struct.unpack_from(
            "<IIQQQQIIQQ", elf, shoff + i * shentsize)
        headers.append(dict(name=name, kind=kind, offset=offset, size=size, link=link, info=info, entsize=entsize))
    names = headers[shstrndx]
    for h in headers:
        start = names["offset"] + h["name"]
        h["name"] = elf[start:elf.index(b"\0", start)].decode()
        h["bytes"] = elf[h["offset"]:h["offset"] + h["size"]] if h["kind"] != 8 else b""  # 8: NOBITS
    return headers


def symbol_names(elf, headers):
    table = next(h for h in headers if h["kind"] == 2)  # SHT_SYMTAB
    strings = headers[table["link"]]
    names = []
    for i in range(table["size"] // 24):
        name, = struct.unpack_from("<I", table["bytes"], i * 24)
        start = strings["offset"] + name
        names.append(elf[start:elf.index(b"\0", start)].decode())
    return names


def function_attributes(headers, symbols):
    """{function name: {attribute: value}} from the cubin's .nv.info (4-byte symbol, 4-byte value entries)."""
    attributes = {}
    info = next((h for h in headers if h["name"] == ".nv.info"), None)
    at = 0
    while info and at < info["size"]:
        form, attribute, size = struct.unpack_from("<BBH", info["bytes"], at)
        if form != 4:  # not a sized value: the 2 bytes are the value
            at += 4
            continue
        if size == 8:
            symbol, value = struct.unpack_from("<II", info["bytes"], at + 4)
            attributes.setdefault(symbols[symbol], {})[attribute] = value
        at += 4 + size
    return attributes


def kernels(path):
    """{mangled name: (instructions, registers, frame bytes, shared bytes, parameter bank bytes, digest)}"""
    result = {}
    for elf in embedded_cubins(open(path, "rb").read()):
        headers = sections(elf)
        symbols = symbol_names(elf, headers)
        attributes = function_attributes(headers, symbols)
        by_name = {h["name"]: h for h in headers}
        for h in headers:
            if not h["name"].startswith(".text."):
                continue
            name = h["name"][len(".text."):]
            digest = hashlib.sha256(h["bytes"])
            for prefix, width in ((".rel", 16), (".rela", 24)):
                relocations = by_name.get(prefix + h["name"])
                if not relocations:
                    continue
                for i in range(relocations["size"] // width):
                    offset, info = struct.unpack_from("<QQ", relocations["bytes"], i * width)
                    addend = relocations["bytes"][i * width + 16:i * width + width]
                    digest.update(struct.pack("<QI", offset, info & 0xFFFFFFFF) + symbols[info >> 32].encode() + addend)
            shared = by_name.get(".nv.shared." + name, {}).get("size", 0)
            params = by_name.get(".nv.constant0." + name, {}).get("size", 0)
            own = attributes.get(name, {})
            result[name] = (h["size"] // 16, own.get(REGCOUNT, -1), own.get(FRAME_SIZE, -1), shared, params,
                            digest.hexdigest()[:16])
    return result


def main(argv):
    if len(argv) < 3:
        sys.exit(__doc__)
    only = argv[argv.index("--filter") + 1] if "--filter" in argv else ""
    before, after = kernels(argv[1]), kernels(argv[2])
    same = 0
    print(f"before: {argv[1]}\nafter:  {argv[2]}")
    print("instructions, registers, stack frame, static shared and parameter bank bytes: before -> after;"
          " code: identical or differs")
    for name in sorted(set(before) & set(after)):
        if only not in name:
            continue
        b, a = before[name], after[name]
        identical = b[5] == a[5]
        same += identical
        print(f"{'identical' if identical else 'DIFFERS  '}  instr {b[0]} -> {a[0]}  regs {b[1]} -> {a[1]}  "
              f"frame {b[2]} -> {a[2]}  shared {b[3]} -> {a[3]}  params {b[4]} -> {a[4]}  {name}")
    for label, mine, other in (("only before", before, after), ("only after ", after, before)):
        for name in sorted(set(mine) - set(other)):
            if only in name:
                k = mine[name]
                print(f"{label}  instr {k[0]}  regs {k[1]}  frame {k[2]}  shared {k[3]}  params {k[4]}  {name}")
    common = [n for n in set(before) & set(after) if only in n]
    print(f"{same} of {len(common)} kernels in both objects byte-identical (code and relocations)")


if __name__ == "__main__":
    main(sys.argv)
