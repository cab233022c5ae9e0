// SPDX-License-Identifier: MIT
// A recorder of agent states (and optionally context maps) at chosen simulation steps.
#pragma once

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <new>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "contextsteer/agents.hpp"
#include "contextsteer/metrics.hpp"

namespace contextsteer {

/// Per-frame scalars a History keeps (index into HistoryFrames::series rows).
enum class Series : std::size_t {
  kAgentCollisions,  ///< agent–agent pair episodes so far (Σ agent episodes / 2)
  kWallCollisions,   ///< agent–wall episodes so far
  kMinClearance,     ///< min over alive agents of the current wall/agent clearance
  kMeanSpeed,        ///< mean |velocity| of alive agents
  kArrived,          ///< agents that reached their goal so far
  kStuck,            ///< agents flagged stuck now
  kMeanProgress,     ///< mean progress along the metrics path
  kLaps,             ///< laps completed so far, all agents
  kCount
};

/// One generation of a History's storage: `capacity` frames of everything. A buffer
/// never grows; a History that outgrows it moves to a new, larger generation, and views
/// of the old one keep it alive (shared_ptr), so memory seen from Python never moves.
struct HistoryFrames {
  std::size_t capacity = 0, n = 0, k = 0;
  bool maps = false, progress = false;
  std::vector<std::int64_t> step;   ///< (T,) step count of each frame
  std::vector<double> time;         ///< (T,) simulated seconds
  std::vector<float> position;      ///< (T,N,2), NaN where an agent is dead
  std::vector<float> velocity;      ///< (T,N,2)
  std::vector<float> heading;       ///< (T,N)
  std::vector<std::uint8_t> alive;  ///< (T,N)
  std::vector<std::int32_t> group;  ///< (T,N) each agent's group at the frame
  /// (T,N) each slot's AgentsView::generation at the frame (0 when not tracked): a new
  /// value in a slot is a new agent.
  std::vector<std::uint32_t> generation;
  std::vector<float> radius;            ///< (T,N) each slot's radius at the frame
  std::vector<float> interest, danger;  ///< (T,N,K) when maps
  /// (T,N,K) when maps and the simulation has a ray sensor (Simulation::sensed()): what
  /// its slot rays sensed; allocated at the first such capture, empty otherwise.
  std::vector<float> sensed;
  /// (T,N,2) and (T,N) when maps: each agent's pose when it perceived the frame's maps
  /// (Simulation::perceived_position / perceived_heading), NaN before its first.
  std::vector<float> perceived_position, perceived_heading;
  std::vector<float> along;   ///< (T,N) progress along the metrics path, when progress
  std::vector<float> series;  ///< (T, Series::kCount)

  HistoryFrames(std::size_t capacity, std::size_t n, std::size_t k, bool maps, bool progress);
  /// Bytes of a buffer of `capacity` frames (with the sensed rays' when `sensed`), in
  /// long double so that no product wraps.
  static long double bytes(std::size_t capacity, std::size_t n, std::size_t k, bool maps,
                           bool progress, bool sensed);
};

/// What History::make_room throws when the frames do not fit in memory (a std::bad_alloc
/// that says so, and how many frames the call needed room for).
class HistoryOutOfMemory : public std::bad_alloc {
 public:
  explicit HistoryOutOfMemory(std::size_t frames)
      : msg_("History: out of memory for the recorded frames (" + std::to_string(frames) +
             " more for this step call); the step did not run (step in shorter calls, record "
             "less often or without maps, or detach the history)") {}
  const char* what() const noexcept override { return msg_.c_str(); }

 private:
  std::string msg_;
};

/// Records the agents' state at the steps where (step − start) % every == 0, from inside
/// the simulation step (no per-step Python). Capture is serial and O(N) (O(NK) with maps);
/// it allocates only when the storage grows (make_room, or a capture that finds no room).
class History {
 public:
  /// n agents (capacity), k slots, every >= 1, `reserve` frames preallocated (>= 1).
  History(std::size_t n, std::size_t k, std::size_t every, bool maps, bool progress,
          std::uint64_t start, std::size_t reserve);

  bool due(std::uint64_t step) const { return step >= start_ && (step - start_) % every_ == 0; }
  /// How many of the steps after + 1, ..., after + steps are due.
  std::size_t due_in(std::uint64_t after, std::size_t steps) const;
  /// Makes room for `more` frames (with the sensed rays' storage when `sensed`), so that
  /// the captures of a step call allocate nothing: a simulation calls it before the call
  /// changes any state, and std::bad_alloc then leaves the simulation as it was.
  /// The memory bound is checked before, by the simulation, over all its Histories
  /// (Simulation::make_history_room, with room_bytes).
  void make_room(std::size_t more, bool sensed);
  /// What make_room(more, sensed) would do: whether it allocates, the bytes of the
  /// buffer after it, and of the buffer it replaces, held while the frames are copied
  /// (0 when it does not grow). A simulation checks the sum over its Histories against
  /// the memory bound before anything is allocated (HistoryOutOfMemory): each alone could
  /// pass it where all of them together do not, and a buffer zero-filled past it got the
  /// process killed before the allocation that failed (fuzz rounds 25 and 26).
  struct Room {
    bool allocates;
    long double after, replaced;
  };
  Room room_bytes(std::size_t more, bool sensed) const;
  /// Appends one frame. `interest`/`danger` (N,K) are read when recording maps, and
  /// `sensed` (N,K) as well when it is not nullptr; `stuck` may be nullptr.
  /// `perceived` is the (N,2) positions and (N,) headings of the last perception, read
  /// with the maps.
  void capture(std::uint64_t step, double time, const AgentsView& agents, const float* interest,
               const float* danger, const float* sensed,
               std::pair<const float*, const float*> perceived, Metrics& metrics,
               const std::uint8_t* stuck);

  /// Frames recorded so far. Readable from any thread while another records: the count and
  /// the storage are published together (see snapshot()).
  std::size_t frames() const {
    const std::lock_guard<std::mutex> lock(mu_);
    return frames_;
  }
  /// The current storage generation and how many of its frames are valid, read together:
  /// the recording thread may grow the storage or add a frame at any time.
  std::pair<std::shared_ptr<HistoryFrames>, std::size_t> snapshot() const {
    const std::lock_guard<std::mutex> lock(mu_);
    return {buf_, frames_};
  }
  /// Stops recording: from any thread, also while the simulation steps (the simulation
  /// drops a detached history at its next step, on the stepping thread).
  void mark_detached() { detached_.store(true, std::memory_order_relaxed); }
  bool detached() const { return detached_.load(std::memory_order_relaxed); }
  std::size_t every() const { return every_; }
  /// The sensed rays of `buf` (a snapshot()'s storage), or nullptr before a frame had any:
  /// allocated by the first such frame, under the same lock.
  const float* sensed(const HistoryFrames& buf) const {
    const std::lock_guard<std::mutex> lock(mu_);
    return buf.sensed.empty() ? nullptr : buf.sensed.data();
  }
  /// The current storage generation (its first frames() frames are valid).
  std::shared_ptr<HistoryFrames> buffer() const {
    const std::lock_guard<std::mutex> lock(mu_);
    return buf_;
  }

 private:
  /// Moves the frames into a new storage generation of `capacity` frames (views of the
  /// old one keep it alive).
  void grow(std::size_t capacity);

  std::size_t every_;
  std::uint64_t start_;
  mutable std::mutex mu_;  ///< guards buf_ and frames_ against readers in other threads
  std::size_t frames_ = 0;
  std::shared_ptr<HistoryFrames> buf_;
  std::atomic<bool> detached_{false};
};

}  // namespace contextsteer
