#include "sdn/lft_read.h"

#include <infiniband/mad.h>

#include <stdexcept>

namespace laas::sdn {

LftReader::LftReader(const LftReadOptions& options) : options_(options) {
  int classes[] = {IB_SMI_CLASS, IB_SMI_DIRECT_CLASS};
  port_ = mad_rpc_open_port(options_.ca.empty() ? nullptr : options_.ca.data(), options_.port,
                            classes, 2);
  if (!port_)
    throw std::runtime_error("cannot open the local port " +
                             (options_.ca.empty() ? std::string("(first adapter)") : options_.ca) +
                             " to read forwarding tables");
}

LftReader::~LftReader() { mad_rpc_close_port(port_); }

routing::LidTable LftReader::read(const std::string& path, std::size_t top) {
  ib_portid_t id{};
  std::string text = path;
  if (str2drpath(&id.drpath, text.data(), 0, 0) < 0)
    throw std::runtime_error("'" + path + "' is not a directed route");
  routing::LidTable table(top + 1, routing::kNoRoute);
  for (std::size_t block = 0; block * IB_SMP_DATA_SIZE <= top; ++block) {
    std::uint8_t data[IB_SMP_DATA_SIZE] = {0};
    bool ok = false;
    for (int attempt = 0; attempt < options_.attempts && !ok; ++attempt)
      ok = smp_query_via(data, &id, IB_ATTR_LINEARFORWTBL, static_cast<unsigned>(block),
                         options_.timeout_ms, port_) != nullptr;
    if (!ok)
      throw std::runtime_error("the switch at directed route " + path +
                               " did not answer for LFT block " + std::to_string(block));
    for (std::size_t i = 0; i < IB_SMP_DATA_SIZE; ++i)
      if (block * IB_SMP_DATA_SIZE + i <= top) table[block * IB_SMP_DATA_SIZE + i] = data[i];
  }
  return table;
}

unsigned LftReader::master_sm_lid(int* lmc) {
  ib_portid_t id{};
  std::string local = "0";
  str2drpath(&id.drpath, local.data(), 0, 0);
  std::uint8_t data[IB_SMP_DATA_SIZE] = {0};
  bool ok = false;
  for (int attempt = 0; attempt < options_.attempts && !ok; ++attempt)
    ok = smp_query_via(data, &id, IB_ATTR_PORT_INFO, static_cast<unsigned>(options_.port),
                       options_.timeout_ms, port_) != nullptr;
  if (!ok) throw std::runtime_error("the local port did not answer its PortInfo");
  if (lmc) *lmc = static_cast<int>(mad_get_field(data, 0, IB_PORT_LMC_F));
  return mad_get_field(data, 0, IB_PORT_SMLID_F);
}

}  // namespace laas::sdn
