// A trace open in the viewer: where it came from, the trace itself and the model built from it.
#pragma once

#include <filesystem>
#include <memory>
#include <string>

#include "gpulb/tracing/trace.hpp"
#include "findings.hpp"
#include "trace_model.hpp"

namespace gpulb::viewer {

struct Document {
  std::string title;   // the file name, or "run 3: patterns / task-queue"
  std::string source;  // the path, or empty for a run made in the viewer
  std::shared_ptr<const TraceModel> model;
  std::vector<Finding> findings;  // computed once, on load
  bool unsaved = false;           // a run made in the viewer, not written to a file yet
};

// Reads and models a trace file; throws trace::TraceFileError with the reader's message.
std::unique_ptr<Document> load_document(const std::filesystem::path& path);
std::unique_ptr<Document> make_document(trace::Trace trace, std::string title);

}  // namespace gpulb::viewer
