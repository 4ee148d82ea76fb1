#include "sdn/mad_port.h"

#include <infiniband/mad.h>
#include <infiniband/umad.h>

#include <cstring>
#include <stdexcept>

namespace laas::sdn {

namespace {

constexpr int kClasses[] = {IB_SMI_CLASS, IB_SMI_DIRECT_CLASS};

ib_portid_t directed(const std::string& path) {
  ib_portid_t id{};
  std::string text = path;
  if (str2drpath(&id.drpath, text.data(), 0, 0) < 0)
    throw std::runtime_error("'" + path + "' is not a directed route");
  return id;
}

}  // namespace

MadPort::MadPort(const MadPortOptions& options) : options_(options) {
  int classes[] = {kClasses[0], kClasses[1]};
  port_ = mad_rpc_open_port(options_.ca.empty() ? nullptr : options_.ca.data(), options_.port,
                            classes, 2);
  if (!port_) throw std::runtime_error("cannot open the local MAD port " + describe());
}

MadPort::~MadPort() {
  for (int cls : kClasses) {
    const int agent = mad_rpc_class_agent(port_, cls);
    if (agent >= 0) umad_unregister(mad_rpc_portid(port_), agent);
  }
  mad_rpc_close_port(port_);
}

std::string MadPort::describe() const {
  return (options_.ca.empty() ? std::string("(first adapter)") : options_.ca) + " port " +
         std::to_string(options_.port);
}

void MadPort::query(const std::string& path, unsigned attribute, unsigned modifier, void* data,
                    const char* what) {
  ib_portid_t id = directed(path);
  for (int attempt = 0; attempt < options_.attempts; ++attempt)
    if (smp_query_via(data, &id, attribute, modifier, options_.timeout_ms, port_)) return;
  throw std::runtime_error("the node at directed route " + path + " did not answer " + what);
}

routing::LidTable MadPort::read(const std::string& path, std::size_t top) {
  routing::LidTable table(top + 1, routing::kNoRoute);
  for (std::size_t block = 0; block * IB_SMP_DATA_SIZE <= top; ++block) {
    std::uint8_t data[IB_SMP_DATA_SIZE] = {0};
    const std::string what = "for LFT block " + std::to_string(block);
    query(path, IB_ATTR_LINEARFORWTBL, static_cast<unsigned>(block), data, what.c_str());
    for (std::size_t i = 0; i < IB_SMP_DATA_SIZE; ++i)
      if (block * IB_SMP_DATA_SIZE + i <= top) table[block * IB_SMP_DATA_SIZE + i] = data[i];
  }
  return table;
}

unsigned MadPort::master_sm_lid(int* lmc) {
  std::uint8_t data[IB_SMP_DATA_SIZE] = {0};
  try {
    query("0", IB_ATTR_PORT_INFO, static_cast<unsigned>(options_.port), data, "its PortInfo");
  } catch (const std::runtime_error&) {
    throw std::runtime_error("the local port " + describe() + " did not answer its PortInfo");
  }
  if (lmc) *lmc = static_cast<int>(mad_get_field(data, 0, IB_PORT_LMC_F));
  return mad_get_field(data, 0, IB_PORT_SMLID_F);
}

LocalPort MadPort::local() {
  std::uint8_t data[IB_SMP_DATA_SIZE] = {0};
  query("0", IB_ATTR_NODE_INFO, 0, data, "its NodeInfo");
  LocalPort local;
  local.is_switch = mad_get_field(data, 0, IB_NODE_TYPE_F) == IB_NODE_SWITCH;
  local.node_guid = mad_get_field64(data, 0, IB_NODE_GUID_F);
  local.port_guid = mad_get_field64(data, 0, IB_NODE_PORT_GUID_F);
  local.number = static_cast<int>(mad_get_field(data, 0, IB_NODE_LOCAL_PORT_F));
  return local;
}

}  // namespace laas::sdn
