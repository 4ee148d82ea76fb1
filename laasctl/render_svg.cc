// The allocation map as SVG: the same rows as the text map -- leaves (rail by rail
// on a rail-optimized tree) with their hosts and up-links, level-2 switches with theirs -- one
// square per host or link in its tenant's colour, free ones white, management grey, drained
// hatched, down or faulty crossed red; every square has a tooltip; a legend names the tenants.
#include <algorithm>
#include <map>
#include <sstream>

#include "laasctl/render.h"

namespace laas::ctl {
namespace {

std::string xml_escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

// Tenant colours: golden-angle hues, so neighbours in name order never look alike.
std::string tenant_colour(int i) {
  std::ostringstream out;
  out << "hsl(" << (i * 137) % 360 << "," << (i % 2 ? 55 : 70) << "%," << (i % 3 ? 55 : 45) << "%)";
  return out.str();
}

constexpr int kCell = 14, kGap = 2, kRow = kCell + 4, kFont = 12;

// Every tenant the map names, numbered in name order (its colour).
std::map<std::string, int> tenant_index(const AllocationMap& map) {
  std::map<std::string, int> index;
  for (const auto* rows : {&map.leaves, &map.level2})
    for (const auto& row : *rows)
      for (const auto* cells : {&row.hosts, &row.up_links})
        for (const auto& o : *cells) {
          std::string name = o.rfind("@down:", 0) == 0 ? o.substr(6) : o;
          if (!name.empty() && name[0] != '@') index.emplace(name, 0);
        }
  int next = 0;
  for (auto& [name, i] : index) i = next++;
  return index;
}

// The SVG's body, drawn top to bottom (y: the next row's top).
class SvgBody {
 public:
  explicit SvgBody(const AllocationMap& map) : map_(map), index_(tenant_index(map)) {
    size_t name_chars = 8, hosts = 0, ups = 0;
    for (const auto* rs : {&map.leaves, &map.level2})
      for (const auto& r : *rs) {
        name_chars = std::max(name_chars, r.name.size());
        hosts = std::max(hosts, r.hosts.size());
        ups = std::max(ups, r.up_links.size());
      }
    const int name_w = static_cast<int>(name_chars) * 7 + 12;
    hosts_x_ = name_w;
    ups_x_ = hosts_x_ + static_cast<int>(hosts) * (kCell + kGap) + 24;
    width_ = std::max(ups_x_ + static_cast<int>(ups) * (kCell + kGap) + 16, 520);
  }

  int width() const { return width_; }
  int height() const { return y_ + 8; }
  std::string text() const { return body_.str(); }

  // The leaves (rail by rail on a rail-optimized tree), then the level-2 switches.
  void draw_rows() {
    bool railed = false;
    const auto rows = leaves_in_order(map_, &railed);
    body_ << "<text x=\"" << hosts_x_ << "\" y=\"" << y_ << "\" font-weight=\"bold\">hosts</text>"
          << "<text x=\"" << ups_x_ << "\" y=\"" << y_
          << "\" font-weight=\"bold\">up-links</text>\n";
    y_ += 6;
    int shown_rail = -1;
    for (const MapRow* r : rows) {
      if (railed && r->rail != shown_rail) {
        shown_rail = r->rail;
        heading("rail " + std::to_string(r->rail));
      }
      draw_row(*r);
    }
    if (!map_.level2.empty()) {
      heading("level-2 switches");
      for (const auto& row : map_.level2) draw_row(row);
    }
  }

  void draw_legend() {
    y_ += 10;
    for (const auto& [name, i] : index_) swatch(tenant_colour(i), "tenant " + name);
    swatch("#ffffff", "free");
    swatch("#9e9e9e", "management (never allocated)");
    swatch("url(#drained)", "drained (out of service)");
    swatch("#ffe0e0", "down or faulty (crossed)");
    for (const auto& d : map_.down) {
      body_ << "<text x=\"4\" y=\"" << y_ + kFont << "\" fill=\"#d00000\">down: " << xml_escape(d)
            << "</text>\n";
      y_ += kRow;
    }
  }

 private:
  void cell(int x, int yy, const std::string& owner, const std::string& what) {
    std::string fill = "#ffffff", tip = what + ": free", extra;
    std::string name = owner.rfind("@down:", 0) == 0 ? owner.substr(6) : owner;
    const bool down = owner == "@faulty" || owner.rfind("@down", 0) == 0;
    if (owner == "@management") {
      fill = "#9e9e9e";
      tip = what + ": management";
    } else if (owner == "@drained") {
      fill = "url(#drained)";
      tip = what + ": drained (out of service)";
    } else if (!name.empty() && name[0] != '@') {
      fill = tenant_colour(index_[name]);
      tip = what + ": tenant " + name;
    }
    if (down) {
      tip += owner == "@faulty" ? " (faulty)" : " (down)";
      if (fill == "#ffffff") fill = "#ffe0e0";
      extra = "<path d=\"M" + std::to_string(x + 2) + " " + std::to_string(yy + 2) + "l" +
              std::to_string(kCell - 4) + " " + std::to_string(kCell - 4) + "m0 -" +
              std::to_string(kCell - 4) + "l-" + std::to_string(kCell - 4) + " " +
              std::to_string(kCell - 4) + "\" stroke=\"#d00000\" stroke-width=\"2\"/>";
    }
    body_ << "<rect x=\"" << x << "\" y=\"" << yy << "\" width=\"" << kCell << "\" height=\""
          << kCell << "\" fill=\"" << fill << "\" stroke=\"#707070\"><title>" << xml_escape(tip)
          << "</title></rect>" << extra << "\n";
  }
  void draw_row(const MapRow& row) {
    body_ << "<text x=\"4\" y=\"" << y_ + kFont << "\">" << xml_escape(row.name) << "</text>\n";
    for (size_t i = 0; i < row.hosts.size(); ++i)
      cell(hosts_x_ + static_cast<int>(i) * (kCell + kGap), y_, row.hosts[i],
           row.name + " host " + std::to_string(i + 1));
    for (size_t i = 0; i < row.up_links.size(); ++i)
      cell(ups_x_ + static_cast<int>(i) * (kCell + kGap), y_, row.up_links[i],
           row.name + " up-link " + std::to_string(i + 1));
    y_ += kRow;
  }
  void heading(const std::string& text) {
    y_ += 6;
    body_ << "<text x=\"4\" y=\"" << y_ + kFont << "\" font-weight=\"bold\">" << xml_escape(text)
          << "</text>\n";
    y_ += kRow;
  }
  void swatch(const std::string& fill, const std::string& label) {
    body_ << "<rect x=\"4\" y=\"" << y_ << "\" width=\"" << kCell << "\" height=\"" << kCell
          << "\" fill=\"" << fill << "\" stroke=\"#707070\"/><text x=\"" << kCell + 10 << "\" y=\""
          << y_ + kFont << "\">" << xml_escape(label) << "</text>\n";
    y_ += kRow;
  }

  const AllocationMap& map_;
  std::map<std::string, int> index_;
  int hosts_x_ = 0, ups_x_ = 0, width_ = 0;
  int y_ = 44;
  std::ostringstream body_;
};

}  // namespace

std::string render_allocation_svg(const AllocationMap& map) {
  SvgBody body(map);
  body.draw_rows();
  body.draw_legend();
  const int width = body.width(), height = body.height();
  std::ostringstream out;
  out << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
      << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << width << "\" height=\"" << height
      << "\" viewBox=\"0 0 " << width << " " << height
      << "\" font-family=\"monospace\" font-size=\"" << kFont << "\">\n"
      << "<defs><pattern id=\"drained\" width=\"6\" height=\"6\" patternUnits=\"userSpaceOnUse\">"
      << "<rect width=\"6\" height=\"6\" fill=\"#e0e0e0\"/>"
      << "<path d=\"M0 6L6 0\" stroke=\"#303030\" stroke-width=\"1.5\"/></pattern></defs>\n"
      << "<rect width=\"100%\" height=\"100%\" fill=\"#ffffff\"/>\n"
      << "<text x=\"4\" y=\"18\" font-weight=\"bold\">" << xml_escape(map.summary) << "</text>\n"
      << body.text() << "</svg>\n";
  return out.str();
}

}  // namespace laas::ctl
