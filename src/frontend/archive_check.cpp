#include "frontend/archive_check.h"

#include <algorithm>
#include <cctype>
#include <cstring>
#include <fstream>
#include <zlib.h>

#include "torch2onnx/options.h"

namespace torch2onnx::frontend {
namespace {

uint64_t le(const unsigned char* p, int n) {
  uint64_t v = 0;
  for (int i = n - 1; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}
uint32_t le32(const unsigned char* p) { return static_cast<uint32_t>(le(p, 4)); }
uint16_t le16(const unsigned char* p) { return static_cast<uint16_t>(le(p, 2)); }

bool ends_with(const std::string& s, const char* suffix) {
  const size_t n = std::strlen(suffix);
  return s.size() >= n && s.compare(s.size() - n, n, suffix) == 0;
}

// TorchScript's serialized code declares a module class's attributes with a
// type (`training : bool`) and its constants as `name : Final[T] = v`; the
// only untyped assignments are the importer's own `__dunder__` lists. An
// untyped `name = v` in a class body crashes LibTorch 1.13's importer
// (ScriptTypeParser::parseClassConstant reads the missing type).
std::string code_problem(const std::vector<unsigned char>& data) {
  const std::string text(data.begin(), data.end());
  bool in_class = false;
  size_t line_no = 0;
  for (size_t pos = 0; pos < text.size();) {
    size_t eol = text.find('\n', pos);
    if (eol == std::string::npos) eol = text.size();
    const std::string line = text.substr(pos, eol - pos);
    pos = eol + 1;
    ++line_no;
    if (line.rfind("class ", 0) == 0) {
      // Enums and NamedTuples list untyped or typed fields legitimately.
      in_class = line.find("(Enum)") == std::string::npos && line.find("(NamedTuple)") == std::string::npos;
      continue;
    }
    if (!line.empty() && line[0] != ' ') in_class = false;
    if (!in_class || line.size() < 3 || line[0] != ' ' || line[1] != ' ' || line[2] == ' ') continue;
    size_t i = 2;
    while (i < line.size() && (std::isalnum(static_cast<unsigned char>(line[i])) || line[i] == '_')) ++i;
    if (i == 2) continue;
    const std::string name = line.substr(2, i - 2);
    while (i < line.size() && line[i] == ' ') ++i;
    const bool untyped_assign = i < line.size() && line[i] == '=' && (i + 1 >= line.size() || line[i + 1] != '=');
    const bool dunder = name.size() > 4 && name.rfind("__", 0) == 0 && ends_with(name, "__");
    if (untyped_assign && !dunder)
      return "line " + std::to_string(line_no) + ": class attribute '" + name + "' is assigned without a type";
  }
  return "";
}

}  // namespace

// Walks the pickle's opcodes (protocols 0-5) and checks each length-prefixed
// argument fits in what is left. Stops at STOP or at an opcode it does not
// know (LibTorch's unpickler reports those itself).
std::string pickle_problem(const unsigned char* data, size_t size, bool strict) {
  size_t pos = 0;
  auto past_end = [&](uint64_t n) { return n > size - pos; };
  auto line = [&]() -> bool {  // a newline-terminated argument
    const void* nl = std::memchr(data + pos, '\n', size - pos);
    if (!nl) return false;
    pos = static_cast<size_t>(static_cast<const unsigned char*>(nl) - data) + 1;
    return true;
  };
  const std::string truncated = "the pickle is truncated or damaged (an argument runs past its end)";
  while (pos < size) {
    const unsigned char op = data[pos++];
    int fixed = -1;   // fixed-size argument bytes
    int prefix = 0;   // bytes of a length prefix followed by that many bytes
    int lines = 0;    // newline-terminated arguments
    switch (op) {
      case '.': return "";  // STOP
      case '(': case ')': case ']': case '}': case '0': case '1': case '2': case 'N': case 'R': case 'a': case 'b':
      case 'e': case 'l': case 'd': case 's': case 't': case 'u': case 'o': case 'Q':
      case 0x81: case 0x85: case 0x86: case 0x87: case 0x88: case 0x89: case 0x8f: case 0x90: case 0x91: case 0x92:
      case 0x93: case 0x94: case 0x97: case 0x98:
        fixed = 0; break;
      case 0x80: case 'K': case 'h': case 'q': fixed = 1; break;
      case 'M': fixed = 2; break;
      case 'J': case 'j': case 'r': fixed = 4; break;
      case 'G': case 0x95: fixed = 8; break;
      case 0x8a: case 0x8c: case 'C': case 'U': prefix = 1; break;
      case 0x8b: case 'X': case 'B': case 'T': prefix = 4; break;
      case 0x8d: case 0x8e: case 0x96: prefix = 8; break;
      case 'I': case 'L': case 'S': case 'V': case 'P': case 'F': case 'g': case 'p': lines = 1; break;
      case 'c': case 'i': lines = 2; break;
      default:  // unknown opcode: LibTorch reports it, unless nothing says this is a pickle at all
        return strict ? "byte " + std::to_string(pos - 1) + " is not a pickle opcode" : "";
    }
    if (fixed >= 0) {
      if (past_end(static_cast<uint64_t>(fixed))) return truncated;
      // LONG_BINPUT: LibTorch sizes its memo table by the index. Memo
      // indices count memoized values, each at least one opcode long.
      if (op == 'r' && le(data + pos, 4) > size) return "the pickle is damaged (a memo index past its length)";
      pos += static_cast<size_t>(fixed);
    } else if (prefix > 0) {
      if (past_end(static_cast<uint64_t>(prefix))) return truncated;
      uint64_t n = le(data + pos, prefix);
      if (op == 'T' && static_cast<int32_t>(n) < 0) return truncated;
      pos += static_cast<size_t>(prefix);
      if (past_end(n)) return truncated;
      pos += static_cast<size_t>(n);
    } else {
      for (int k = 0; k < lines; ++k)
        if (!line()) return truncated;
    }
  }
  return "the pickle has no STOP opcode (it is truncated)";
}

bool inflate_entry(const unsigned char* src, size_t n, std::vector<unsigned char>& out) {
  z_stream zs{};
  if (inflateInit2(&zs, -MAX_WBITS) != Z_OK) return false;
  zs.next_in = const_cast<unsigned char*>(src);
  zs.avail_in = static_cast<uInt>(n);
  zs.next_out = out.data();
  zs.avail_out = static_cast<uInt>(out.size());
  const int rc = inflate(&zs, Z_FINISH);
  const bool complete = rc == Z_STREAM_END && zs.total_out == out.size();
  inflateEnd(&zs);
  return complete;
}

std::string content_problem(const std::string& name, const std::vector<unsigned char>& data) {
  if (ends_with(name, ".pkl")) return pickle_problem(data.data(), data.size());
  if (ends_with(name, ".py") && name.find("/code/") != std::string::npos) return code_problem(data);
  return "";
}

int64_t check_archive_entries(const std::string& path, const char* what, Error::Kind kind) {
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  const int64_t size = static_cast<int64_t>(in.tellg());
  auto corrupt = [&](const std::string& why) {
    return Error(kind, std::string("cannot load ") + what + " '" + path + "': it is corrupt (" + why + ")");
  };
  auto read = [&](int64_t offset, size_t n) {
    std::vector<unsigned char> buf(n);
    if (offset < 0 || offset + static_cast<int64_t>(n) > size) throw corrupt("a zip record points past the end of the file");
    in.seekg(offset);
    in.read(reinterpret_cast<char*>(buf.data()), static_cast<std::streamsize>(n));
    if (!in) throw corrupt("unreadable zip record");
    return buf;
  };
  // End of central directory: within the last 64 KiB + 22 bytes.
  const int64_t tail_len = std::min<int64_t>(size, 65536 + 22);
  std::vector<unsigned char> tail = read(size - tail_len, static_cast<size_t>(tail_len));
  int64_t eocd = -1;
  for (int64_t i = tail_len - 22; i >= 0; --i)
    if (le32(&tail[static_cast<size_t>(i)]) == 0x06054b50) {
      eocd = i;
      break;
    }
  if (eocd < 0) return -1;  // LibTorch reports it
  const unsigned char* e = &tail[static_cast<size_t>(eocd)];
  const uint32_t entries = le16(e + 10), cd_size = le32(e + 12), cd_offset = le32(e + 16);
  if (entries == 0xFFFF || cd_size == 0xFFFFFFFF || cd_offset == 0xFFFFFFFF) return -1;  // zip64
  int64_t data_bytes = 0;
  bool sizes_known = true;
  std::vector<unsigned char> cd = read(cd_offset, cd_size);
  size_t pos = 0;
  for (uint32_t k = 0; k < entries; ++k) {
    if (pos + 46 > cd.size() || le32(&cd[pos]) != 0x02014b50) throw corrupt("damaged zip central directory");
    const unsigned char* c = &cd[pos];
    const uint16_t method = le16(c + 10), name_len = le16(c + 28), extra_len = le16(c + 30), comment_len = le16(c + 32);
    const uint32_t crc = le32(c + 16), comp_size = le32(c + 20), raw_size = le32(c + 24), local = le32(c + 42);
    if (pos + 46 + name_len > cd.size()) throw corrupt("damaged zip central directory");
    const std::string name(reinterpret_cast<const char*>(c + 46), name_len);
    pos += 46 + name_len + extra_len + comment_len;
    const bool tensor_data = (name.find("/data/") != std::string::npos || name.find("/constants/") != std::string::npos) &&
                             name.find(".pkl") == std::string::npos;
    if (tensor_data) {
      if (raw_size == 0xFFFFFFFF) sizes_known = false;  // zip64 sizes: not read here
      data_bytes += raw_size;
    }
    if (tensor_data || (method != 0 && method != 8) || comp_size == 0xFFFFFFFF || raw_size == 0xFFFFFFFF ||
        local == 0xFFFFFFFF || raw_size > (256u << 20))
      continue;
    std::vector<unsigned char> lh = read(local, 30);
    if (le32(lh.data()) != 0x04034b50) throw corrupt("damaged zip entry header for '" + name + "'");
    std::vector<unsigned char> data = read(static_cast<int64_t>(local) + 30 + le16(&lh[26]) + le16(&lh[28]), comp_size);
    if (method == 8) {  // deflated (Python's torch.jit.save compresses code): inflate, then check
      std::vector<unsigned char> raw(raw_size);
      if (!inflate_entry(data.data(), data.size(), raw)) throw corrupt("entry '" + name + "' cannot be decompressed");
      data.swap(raw);
    }
    if (::crc32(0L, data.data(), static_cast<uInt>(data.size())) != crc)
      throw corrupt("entry '" + name + "' fails its CRC check");
    const std::string problem = content_problem(name, data);
    if (!problem.empty()) throw corrupt("entry '" + name + "': " + problem);
  }
  return sizes_known ? data_bytes : -1;
}

}  // namespace torch2onnx::frontend
