// The field numbers and enum values of Perfetto's trace schema that the exporter writes
// (tests/fixtures/perfetto/perfetto_trace.proto; the tests decode every export against it).
#pragma once

#include <cstdint>

namespace gpulb::trace::pf {

constexpr std::uint32_t kTracePacket = 1;  // Trace.packet

namespace packet {
constexpr std::uint32_t kTimestamp = 8, kSequenceId = 10, kTrackEvent = 11, kInternedData = 12,
                        kSequenceFlags = 13, kClockSnapshot = 6, kTimestampClockId = 58,
                        kDefaults = 59, kTrackDescriptor = 60;
constexpr std::uint64_t kIncrementalStateCleared = 1, kNeedsIncrementalState = 2;
}  // namespace packet

namespace defaults {  // TracePacketDefaults, TrackEventDefaults
constexpr std::uint32_t kTimestampClockId = 58, kTrackEventDefaults = 11;
constexpr std::uint32_t kTrackUuid = 11, kExtraCounterTrackUuids = 31;
}  // namespace defaults

namespace clock {  // ClockSnapshot, ClockSnapshot.Clock
constexpr std::uint32_t kClocks = 1, kPrimaryTraceClock = 2;
constexpr std::uint32_t kClockId = 1, kTimestamp = 2, kIsIncremental = 3;
constexpr std::uint32_t kBoottime = 6;
constexpr std::uint32_t kSequenceIncremental = 64;  // the first sequence-scoped clock id
}  // namespace clock

namespace descriptor {  // TrackDescriptor, CounterDescriptor
constexpr std::uint32_t kUuid = 1, kName = 2, kParentUuid = 5, kCounter = 8, kChildOrdering = 11,
                        kSiblingOrderRank = 12, kDescription = 14;
constexpr std::uint64_t kOrderExplicit = 3;
constexpr std::uint32_t kCounterUnit = 3;
constexpr std::uint64_t kUnitCount = 2;
}  // namespace descriptor

namespace event {  // TrackEvent
constexpr std::uint32_t kDebugAnnotations = 4, kType = 9, kNameIid = 10, kTrackUuid = 11,
                        kExtraCounterValues = 12, kCounterValue = 30, kFlowIds = 47,
                        kTerminatingFlowIds = 48;
constexpr std::uint64_t kSliceBegin = 1, kSliceEnd = 2, kInstant = 3, kCounter = 4;
}  // namespace event

namespace interned {  // InternedData, EventName, DebugAnnotationName
constexpr std::uint32_t kEventNames = 2, kAnnotationNames = 3;
constexpr std::uint32_t kIid = 1, kName = 2;
}  // namespace interned

namespace annotation {  // DebugAnnotation
constexpr std::uint32_t kNameIid = 1, kUintValue = 3, kIntValue = 4;
}

}  // namespace gpulb::trace::pf
