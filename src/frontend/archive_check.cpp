#include "frontend/archive_check.h"
#include "frontend/record_check.h"

#include <algorithm>
#include <cctype>
#include <cstring>
#include <set>
#include <zlib.h>

#include "torch2onnx/options.h"

namespace torch2onnx::frontend {
namespace {

uint64_t le(const unsigned char* p, int n) {
  uint64_t v = 0;
  for (int i = n - 1; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}

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
    // The importer reads these itself; any other untyped assignment is taken
    // for a constant, whose type it then dereferences.
    static const std::set<std::string> special = {"__parameters__", "__annotations__", "__buffers__",
                                                  "__forward_pre_hooks__", "__forward_hooks__"};
    if (untyped_assign && !special.count(name))
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

bool is_code(const std::string& name) { return ends_with(name, ".py") && name.find("/code/") != std::string::npos; }

std::string content_problem(const std::string& name, const std::vector<unsigned char>& data) {
  if (ends_with(name, ".pkl")) return pickle_problem(data.data(), data.size());
  if (is_code(name)) return code_problem(data);
  return "";
}

ArchiveFacts check_archive_entries(const ZipFile& zip, const std::string& path, const char* what, Error::Kind kind) {
  auto corrupt = [&](const std::string& why) {
    return Error(kind, std::string("cannot load ") + what + " '" + path + "': it is corrupt (" + why + ")");
  };
  ArchiveFacts facts;
  if (zip.layout() == ZipFile::Layout::Damaged) throw corrupt(zip.directory_problem());
  // A zip ends with its directory: a zip file without one was cut short.
  if (zip.layout() == ZipFile::Layout::NoEnd)
    throw corrupt("it is truncated: it starts as a zip file but has no zip directory at its end");
  if (zip.layout() != ZipFile::Layout::Plain && zip.layout() != ZipFile::Layout::Zip64) return facts;
  int64_t data_bytes = 0;
  for (const ZipEntry& e : zip.entries()) {
    const std::string& name = e.name;
    // LibTorch allocates an entry's claimed size before reading it: a size
    // the file cannot hold is damage, not a request for 272 GB.
    const std::string impossible = zip.size_problem(e);
    if (!impossible.empty()) throw corrupt(impossible);
    const bool tensor_data = (name.find("/data/") != std::string::npos || name.find("/constants/") != std::string::npos) &&
                             name.find(".pkl") == std::string::npos;
    if (tensor_data) {
      data_bytes += static_cast<int64_t>(e.size);
      facts.unchecked.push_back(e);
      continue;
    }
    const size_t slash = name.find('/');
    const std::string record = slash == std::string::npos ? name : name.substr(slash + 1);
    if (record == "byteorder") facts.has_byteorder = true;
    if ((e.method != 0 && e.method != 8) || e.size > (256u << 20)) {
      facts.has_setstate = facts.has_setstate || is_code(name);  // unread code might define it
      facts.unchecked.push_back(e);
      continue;
    }
    std::string why;
    std::optional<std::vector<unsigned char>> data = zip.contents(e, &why);
    if (!data) throw corrupt(why);
    if (::crc32(0L, data->data(), static_cast<uInt>(data->size())) != e.crc)
      throw corrupt("entry '" + name + "' fails its CRC check");
    const std::string problem = content_problem(name, *data);
    if (!problem.empty()) throw corrupt("entry '" + name + "': " + problem);
    if (is_code(name) && std::string(data->begin(), data->end()).find("__setstate__") != std::string::npos)
      facts.has_setstate = true;
    if (record == "version" || (record == ".data/version" && facts.version.empty())) {
      facts.version.assign(data->begin(), data->end());
      while (!facts.version.empty() && std::isspace(static_cast<unsigned char>(facts.version.back())))
        facts.version.pop_back();
    }
  }
  facts.data_bytes = data_bytes;
  return facts;
}

void check_archive_entries(const std::string& path, const char* what, Error::Kind kind) {
  std::shared_ptr<const ZipFile> zip = ZipFile::open(path);
  if (!zip) throw Error(kind, std::string("cannot open ") + what + " '" + path + "'");
  ArchiveFacts facts = check_archive_entries(*zip, path, what, kind);
  RecordCheck records(zip, std::move(facts.unchecked), path, what, kind, /*background=*/false);
}

}  // namespace torch2onnx::frontend
