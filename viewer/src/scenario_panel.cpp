#include "scenario_panel.hpp"

#include <imgui.h>

#include <algorithm>
#include <exception>

namespace gpulb::viewer {

ScenarioPanel::ScenarioPanel(const Registry& registry)
    : registry_(registry), gpus_(registry.cuda_devices()) {
  if (!gpus_.empty()) backend_ = 1;
  // Start on the first policy the chosen backend runs.
  const auto policies = registry.policies();
  for (int i = 0; i < static_cast<int>(policies.size()); ++i) {
    if (registry.policy_runs_on(*policies[static_cast<std::size_t>(i)],
                                backend_ == 1 ? Backend::Cuda : Backend::Cpu)) {
      policy_ = i;
      break;
    }
  }
}

ScenarioPanel::~ScenarioPanel() {
  if (thread_.joinable()) thread_.join();
}

void ScenarioPanel::param_input(const ParamSpec& spec) {
  std::string& value = values_.try_emplace(spec.name, spec.default_value).first->second;
  ImGui::PushID(spec.name.c_str());
  ImGui::SetNextItemWidth(150);
  if (!spec.choices.empty()) {
    int current = static_cast<int>(std::find(spec.choices.begin(), spec.choices.end(), value) -
                                   spec.choices.begin());
    if (ImGui::BeginCombo(spec.name.c_str(), value.c_str())) {
      for (int i = 0; i < static_cast<int>(spec.choices.size()); ++i) {
        if (ImGui::Selectable(spec.choices[static_cast<std::size_t>(i)].c_str(), i == current))
          value = spec.choices[static_cast<std::size_t>(i)];
      }
      ImGui::EndCombo();
    }
  } else if (spec.min < spec.max) {
    long long v = 0;
    try {
      v = std::stoll(value);
    } catch (const std::exception&) {
      v = spec.min;
    }
    if (ImGui::InputScalar(spec.name.c_str(), ImGuiDataType_S64, &v)) {
      value = std::to_string(std::clamp<long long>(v, spec.min, spec.max));
    }
  } else {
    char buf[256];
    std::snprintf(buf, sizeof buf, "%s", value.c_str());
    if (ImGui::InputText(spec.name.c_str(), buf, sizeof buf)) value = buf;
  }
  if (ImGui::IsItemHovered())
    ImGui::SetTooltip("%s\nrange %s, default %s", spec.description.c_str(), spec.range.c_str(),
                      spec.default_value.c_str());
  ImGui::PopID();
}

void ScenarioPanel::start_run() {
  const std::vector<const Scenario*> scenarios = registry_.scenarios();
  RunConfig cfg;
  cfg.scenario = scenarios[static_cast<std::size_t>(scenario_)]->name();
  const PolicyDescriptor& policy = *registry_.policies()[static_cast<std::size_t>(policy_)];
  cfg.policy = std::string(policy.name);
  cfg.backend = backend_ == 1 ? Backend::Cuda : Backend::Cpu;
  cfg.workers = static_cast<std::uint32_t>(std::max(workers_, 0));
  for (const ParamSpec& p : scenarios[static_cast<std::size_t>(scenario_)]->params()) {
    const auto it = values_.find(p.name);
    if (it != values_.end() && it->second != p.default_value) cfg.params[p.name] = it->second;
  }
  for (const ParamSpec* o : options_of(policy)) {
    const auto it = values_.find(o->name);
    if (it != values_.end() && it->second != o->default_value) cfg.params[o->name] = it->second;
  }
  done_ = 0;
  expected_ = 0;
  cfg.progress = [this](std::uint64_t done, std::uint64_t expected) {
    done_.store(done);
    expected_.store(expected);
  };
  {
    std::lock_guard lock(mutex_);
    error_.clear();
    result_.reset();
  }
  ++runs_;
  title_ = "run " + std::to_string(runs_) + ": " + cfg.scenario + " / " + cfg.policy + " / " +
           (backend_ == 1 ? "cuda" : "cpu");
  if (thread_.joinable()) thread_.join();
  running_ = true;
  thread_ = std::jthread([this, cfg = std::move(cfg)] {
    try {
      RunResult r = run(registry_, cfg);
      std::lock_guard lock(mutex_);
      result_ = std::move(r);
    } catch (const std::exception& e) {
      std::lock_guard lock(mutex_);
      error_ = e.what();
    }
    running_ = false;
  });
}

std::optional<ScenarioPanel::Finished> ScenarioPanel::draw() {
  const std::vector<const Scenario*> scenarios = registry_.scenarios();
  if (scenarios.empty()) {
    ImGui::TextDisabled("The registry holds no scenarios.");
    return std::nullopt;
  }
  scenario_ = std::clamp(scenario_, 0, static_cast<int>(scenarios.size()) - 1);
  const bool busy = running_.load();
  ImGui::BeginDisabled(busy);

  ImGui::SetNextItemWidth(150);
  if (ImGui::BeginCombo("scenario",
                        scenarios[static_cast<std::size_t>(scenario_)]->name().c_str())) {
    for (int i = 0; i < static_cast<int>(scenarios.size()); ++i) {
      if (ImGui::Selectable(scenarios[static_cast<std::size_t>(i)]->name().c_str(),
                            i == scenario_)) {
        scenario_ = i;
        values_.clear();
      }
    }
    ImGui::EndCombo();
  }
  const Scenario& sc = *scenarios[static_cast<std::size_t>(scenario_)];
  ImGui::PushTextWrapPos(0.0f);
  ImGui::TextColored(ImVec4(0.6f, 0.62f, 0.67f, 1), "%s", sc.description().c_str());
  ImGui::PopTextWrapPos();
  for (const ParamSpec& p : sc.params()) param_input(p);

  ImGui::SetNextItemWidth(150);
  const char* backends[] = {"cpu", "cuda"};
  if (ImGui::BeginCombo("backend", backends[backend_])) {
    if (ImGui::Selectable("cpu (host threads)", backend_ == 0)) backend_ = 0;
    ImGui::BeginDisabled(gpus_.empty());
    const std::string cuda =
        gpus_.empty() ? "cuda (no GPU here)" : "cuda (" + std::to_string(gpus_.size()) + " GPU)";
    if (ImGui::Selectable(cuda.c_str(), backend_ == 1)) backend_ = 1;
    ImGui::EndDisabled();
    ImGui::EndCombo();
  }
  const Backend backend = backend_ == 1 ? Backend::Cuda : Backend::Cpu;
  const std::vector<const PolicyDescriptor*> policies = registry_.policies();
  policy_ = std::clamp(policy_, 0, static_cast<int>(policies.size()) - 1);
  ImGui::SetNextItemWidth(150);
  if (ImGui::BeginCombo("policy",
                        std::string(policies[static_cast<std::size_t>(policy_)]->name).c_str())) {
    for (int i = 0; i < static_cast<int>(policies.size()); ++i) {
      const PolicyDescriptor& p = *policies[static_cast<std::size_t>(i)];
      const bool ok = registry_.policy_runs_on(p, backend);
      ImGui::BeginDisabled(!ok);
      const std::string label = std::string(p.name) + (ok ? "" : " (not on this backend yet)");
      if (ImGui::Selectable(label.c_str(), i == policy_)) policy_ = i;
      ImGui::EndDisabled();
      if (ImGui::IsItemHovered(ImGuiHoveredFlags_AllowWhenDisabled)) {
        ImGui::SetTooltip("%s\nfrom %s", std::string(p.summary).c_str(),
                          std::string(p.paper).c_str());
      }
    }
    ImGui::EndCombo();
  }
  // The chosen policy's options, from its descriptor (the same table --param and `gpulb list` read).
  for (const ParamSpec* o : options_of(*policies[static_cast<std::size_t>(policy_)]))
    param_input(*o);
  ImGui::SetNextItemWidth(150);
  ImGui::InputInt("workers", &workers_);
  workers_ = std::max(workers_, 0);
  if (ImGui::IsItemHovered())
    ImGui::SetTooltip(
        "0: the backend's default (hardware threads, or what the occupancy API allows)");
  const bool supported =
      registry_.policy_runs_on(*policies[static_cast<std::size_t>(policy_)], backend);
  ImGui::BeginDisabled(!supported);
  if (ImGui::Button("Run", ImVec2(150, 0))) start_run();
  ImGui::EndDisabled();
  ImGui::EndDisabled();

  if (busy) {
    const std::uint64_t done = done_.load(), expected = expected_.load();
    const float frac =
        expected > 0 ? static_cast<float>(done) / static_cast<float>(expected) : 0.0f;
    const std::string text =
        expected > 0 ? std::to_string(done) + " / " + std::to_string(expected) + " tasks"
                     : std::to_string(done) + " tasks";
    ImGui::ProgressBar(expected > 0 ? frac : -1.0f * static_cast<float>(ImGui::GetTime()),
                       ImVec2(-1, 0), text.c_str());
  }
  std::lock_guard lock(mutex_);
  if (!error_.empty()) {
    ImGui::PushTextWrapPos(0.0f);
    ImGui::TextColored(ImVec4(1.0f, 0.45f, 0.45f, 1), "Run failed: %s", error_.c_str());
    ImGui::PopTextWrapPos();
  }
  if (!busy && result_) {
    Finished f{std::move(result_->trace), title_};
    result_.reset();
    return f;
  }
  return std::nullopt;
}

}  // namespace gpulb::viewer
