// The JSON of what agents send (node_report.h): POST /api/v1/agent/register
// and POST /api/v1/agent/heartbeat. docs/agent.md has the wire format.
// Parsing is strict: unknown fields and wrong types are InvalidArgument
// naming the field.
#pragma once

#include <nlohmann/json.hpp>

#include "common/status.h"
#include "protocol/node_report.h"

namespace berth::protocol {

nlohmann::json RegistrationJson(const NodeRegistration& registration);
Result<NodeRegistration> ParseRegistration(const nlohmann::json& body);

nlohmann::json HeartbeatJson(const Heartbeat& heartbeat);
Result<Heartbeat> ParseHeartbeat(const nlohmann::json& body);

}  // namespace berth::protocol
