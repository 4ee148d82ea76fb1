#include "topology/recognize.h"

#include <cctype>
#include <optional>

#include "topology/recognizer.h"

namespace laas::topology {

using recognition::find_sm;
using recognition::grow;
using recognition::Recognizer;

bool natural_less(const std::string& a, const std::string& b) {
  size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    const bool da = std::isdigit(static_cast<unsigned char>(a[i]));
    const bool db = std::isdigit(static_cast<unsigned char>(b[j]));
    if (da && db) {
      size_t ie = i, je = j;
      while (ie < a.size() && std::isdigit(static_cast<unsigned char>(a[ie]))) ++ie;
      while (je < b.size() && std::isdigit(static_cast<unsigned char>(b[je]))) ++je;
      // Compare numerically without overflow: strip leading zeros, then length, then digits.
      size_t is = i, js = j;
      while (is + 1 < ie && a[is] == '0') ++is;
      while (js + 1 < je && b[js] == '0') ++js;
      if (ie - is != je - js) return ie - is < je - js;
      const int c = a.compare(is, ie - is, b, js, je - js);
      if (c != 0) return c < 0;
      i = ie;
      j = je;
    } else {
      if (a[i] != b[j]) return a[i] < b[j];
      ++i;
      ++j;
    }
  }
  if ((a.size() - i) != (b.size() - j)) return a.size() - i < b.size() - j;
  return a < b;
}

Recognition recognize(const Fabric& fabric, Guid sm_port_guid) {
  RecognizeOptions options;
  options.sm_port_guid = sm_port_guid;
  return recognize(fabric, options);
}

Recognition recognize(const Fabric& fabric, const RecognizeOptions& options) {
  std::string note;
  std::optional<FatTreeSpec> declared;
  if (!options.declared.empty()) {
    try {
      declared = parse_spec(options.declared);
    } catch (const SpecError& e) {
      Recognition r;
      r.error = "laas.yaml topology '" + options.declared + "' is not a spec: " + e.what();
      return r;
    }
  }
  if (options.layout) {
    if (declared && declared->text() != options.layout->spec) {
      note = "; the recorded layout (" + options.layout->spec + ") differs from laas.yaml's " +
             declared->text() + " and is not used";
    } else {
      Recognition r;
      std::string bad;
      try {
        bad = embed_layout(*options.layout, fabric, &r, options.set_aside_loops);
      } catch (const SpecError& e) {
        bad = std::string("its spec is invalid: ") + e.what();
      }
      if (bad.empty()) {
        r.source = TreeSource::kLayout;
        r.source_note = "intended tree " + r.tree->spec().text() + " from the recorded layout";
        find_sm(fabric, options.sm_port_guid, r);
        grow(*options.layout, fabric, options, declared ? &*declared : nullptr, r);
        return r;
      }
      note = "; the recorded layout (" + options.layout->spec + ") does not fit: " + bad;
      if (options.set_aside_loops) {
        r.error = "the recorded layout (" + options.layout->spec + ") does not fit: " + bad;
        return r;
      }
    }
  }
  Recognition r;
  if (declared) {
    r = Recognizer(fabric, &*declared).run(options.sm_port_guid);
    r.source = TreeSource::kDeclared;
    if (r.ok())
      r.source_note = "intended tree " + r.tree->spec().text() + " declared in laas.yaml";
    else
      r.error =
          "the cabling does not fit laas.yaml's topology " + declared->text() + ": " + r.error;
  } else {
    r = Recognizer(fabric, nullptr).run(options.sm_port_guid);
    r.source = TreeSource::kCabling;
    if (r.ok())
      r.source_note = "intended tree " + r.tree->spec().text() +
                      " read from the cabling (largest consistent tree)";
  }
  if (r.ok())
    r.source_note += note;
  else
    r.error += note;
  return r;
}

}  // namespace laas::topology
