// The JSON of the server's answer to a heartbeat (desired_state.h). Each
// run entry is one flat object: the task's identity and gang position,
// and its TaskLaunch (task_launch_json.h). docs/agent.md has the wire
// format.
//
// Parsing is strict, as for every Berth wire format: an unknown field or a
// wrong type anywhere is InvalidArgument naming it ("run[0].limits.cpu_milli:
// expected an integer"), and the agent acts on none of the answer. Fields
// that are absent take their defaults, so an agent reads an answer from a
// server that predates a field; a server must not send a field its agents
// do not know (upgrade agents first).
#pragma once

#include <nlohmann/json.hpp>

#include "common/status.h"
#include "protocol/desired_state.h"

namespace berth::protocol {

nlohmann::json DesiredJson(const DesiredState& desired);
Result<DesiredState> ParseDesired(const nlohmann::json& body);

}  // namespace berth::protocol
