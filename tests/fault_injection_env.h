// FaultInjectionEnv: an Env for tests (after LevelDB's fault_injection_test)
// that works on the real file system but remembers what is durable -- the
// content of a file as of its last Sync, and a directory's entries as of its
// last SyncDirectory -- so that SimulateCrash() can put the directories back
// into the state a power loss would leave: files never synced are empty,
// entries never made durable are gone (a rename not followed by a directory
// sync is undone), removals not made durable come back.
//
// CrashAtOperation(k): the k-th file operation (counting from 1: creations,
// appends, writes, syncs, closes, renames, removals, directory syncs) and
// every later one fail with IoError, as if the machine stopped there.
// FailWritesAfter(bytes, status): appends and writes fail with `status` once
// `bytes` have been written (ENOSPC, EIO).
//
// Files it does not write are left alone: names in `untracked` (the SQLite
// catalog and its log go through SQLite's own, synchronous=FULL, I/O).
// Thread-safe (one mutex): a writer's background merge thread writes
// through it while the writer commits.
#ifndef NEARDUP_TESTS_FAULT_INJECTION_ENV_H_
#define NEARDUP_TESTS_FAULT_INJECTION_ENV_H_

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>

#include "neardup/env.h"

namespace neardup::testing {

class FaultInjectionEnv : public Env {
 public:
  explicit FaultInjectionEnv(std::set<std::string> untracked) : untracked_(std::move(untracked)) {}

  void CrashAtOperation(uint64_t k) {
    std::lock_guard<std::mutex> lock(mu_);
    crash_at_ = k;
  }
  void FailWritesAfter(uint64_t bytes, Status status) {
    std::lock_guard<std::mutex> lock(mu_);
    write_limit_ = bytes;
    write_error_ = std::move(status);
  }
  uint64_t operations() const {
    std::lock_guard<std::mutex> lock(mu_);
    return operations_;
  }
  bool crashed() const {
    std::lock_guard<std::mutex> lock(mu_);
    return crashed_;
  }
  // Leaves every tracked directory as a power loss at this point would.
  void SimulateCrash();

  Result<std::unique_ptr<WritableFile>> NewWritableFile(const std::string& path) override;
  Status RenameFile(const std::string& from, const std::string& to) override;
  Status RemoveFile(const std::string& path) override;
  Status SyncDirectory(const std::string& dir) override;
  Result<std::unique_ptr<FileLock>> LockFile(const std::string& path) override {
    return Env::Default()->LockFile(path);
  }

 private:
  friend class FaultWritableFile;
  using Entries = std::map<std::string, int>;  // name -> file identity

  // Counts one operation; an error once the machine has "stopped".
  Status Operation() {
    if (crashed_ || ++operations_ == crash_at_) {
      crashed_ = true;
      return IoError("simulated crash");
    }
    return Status::Ok();
  }
  Status Written(uint64_t bytes) {
    written_ += bytes;
    if (written_ > write_limit_) return write_error_;
    return Status::Ok();
  }
  // Starts tracking the directory of `path`: what is there now is durable.
  void Track(const std::string& path);
  static std::string Dir(const std::string& path) {
    return std::filesystem::path(path).parent_path().string();
  }
  static std::string Name(const std::string& path) {
    return std::filesystem::path(path).filename().string();
  }
  static std::string ReadAll(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
  }

  mutable std::mutex mu_;  // guards everything below
  std::set<std::string> untracked_;
  uint64_t crash_at_ = 0;  // 0: never
  uint64_t operations_ = 0;
  bool crashed_ = false;
  uint64_t write_limit_ = UINT64_MAX;
  uint64_t written_ = 0;
  Status write_error_;
  int next_identity_ = 0;
  std::map<std::string, Entries> live_;               // by directory
  std::map<std::string, Entries> durable_;            // by directory, as of its last sync
  std::map<int, std::optional<std::string>> synced_;  // content as of the last Sync
};

class FaultWritableFile : public WritableFile {
 public:
  FaultWritableFile(FaultInjectionEnv* env, std::unique_ptr<WritableFile> file, std::string path,
                    int identity)
      : env_(env), file_(std::move(file)), path_(std::move(path)), identity_(identity) {}
  Status Append(std::span<const uint8_t> bytes) override {
    std::lock_guard<std::mutex> lock(env_->mu_);
    NEARDUP_RETURN_IF_ERROR(env_->Operation());
    NEARDUP_RETURN_IF_ERROR(env_->Written(bytes.size()));
    return file_->Append(bytes);
  }
  Status WriteAt(uint64_t offset, std::span<const uint8_t> bytes) override {
    std::lock_guard<std::mutex> lock(env_->mu_);
    NEARDUP_RETURN_IF_ERROR(env_->Operation());
    NEARDUP_RETURN_IF_ERROR(env_->Written(bytes.size()));
    return file_->WriteAt(offset, bytes);
  }
  Status Sync() override {
    std::lock_guard<std::mutex> lock(env_->mu_);
    NEARDUP_RETURN_IF_ERROR(env_->Operation());
    NEARDUP_RETURN_IF_ERROR(file_->Sync());
    env_->synced_[identity_] = FaultInjectionEnv::ReadAll(path_);
    return Status::Ok();
  }
  Status Close() override {
    std::lock_guard<std::mutex> lock(env_->mu_);
    NEARDUP_RETURN_IF_ERROR(env_->Operation());
    return file_->Close();
  }

 private:
  FaultInjectionEnv* env_;
  std::unique_ptr<WritableFile> file_;
  std::string path_;
  int identity_;
};

inline void FaultInjectionEnv::Track(const std::string& path) {
  const std::string dir = Dir(path);
  if (live_.count(dir)) return;
  Entries& live = live_[dir];
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (!entry.is_regular_file() || untracked_.count(Name(entry.path().string()))) continue;
    const int identity = next_identity_++;
    live[Name(entry.path().string())] = identity;
    synced_[identity] = ReadAll(entry.path().string());
  }
  durable_[dir] = live;
}

inline Result<std::unique_ptr<WritableFile>> FaultInjectionEnv::NewWritableFile(
    const std::string& path) {
  std::lock_guard<std::mutex> lock(mu_);
  NEARDUP_RETURN_IF_ERROR(Operation());
  Track(path);
  NEARDUP_ASSIGN_OR_RETURN(std::unique_ptr<WritableFile> file,
                           Env::Default()->NewWritableFile(path));
  const int identity = next_identity_++;
  live_[Dir(path)][Name(path)] = identity;
  synced_[identity] = std::nullopt;
  return std::unique_ptr<WritableFile>(
      new FaultWritableFile(this, std::move(file), path, identity));
}

inline Status FaultInjectionEnv::RenameFile(const std::string& from, const std::string& to) {
  std::lock_guard<std::mutex> lock(mu_);
  NEARDUP_RETURN_IF_ERROR(Operation());
  Track(from);
  NEARDUP_RETURN_IF_ERROR(Env::Default()->RenameFile(from, to));
  Entries& live = live_[Dir(from)];
  auto it = live.find(Name(from));
  if (it != live.end()) {
    live[Name(to)] = it->second;
    live.erase(Name(from));
  }
  return Status::Ok();
}

inline Status FaultInjectionEnv::RemoveFile(const std::string& path) {
  std::lock_guard<std::mutex> lock(mu_);
  NEARDUP_RETURN_IF_ERROR(Operation());
  Track(path);
  NEARDUP_RETURN_IF_ERROR(Env::Default()->RemoveFile(path));
  live_[Dir(path)].erase(Name(path));
  return Status::Ok();
}

inline Status FaultInjectionEnv::SyncDirectory(const std::string& dir) {
  std::lock_guard<std::mutex> lock(mu_);
  NEARDUP_RETURN_IF_ERROR(Operation());
  Track(dir + "/x");
  NEARDUP_RETURN_IF_ERROR(Env::Default()->SyncDirectory(dir));
  durable_[dir] = live_[dir];
  return Status::Ok();
}

inline void FaultInjectionEnv::SimulateCrash() {
  std::lock_guard<std::mutex> lock(mu_);
  for (const auto& [dir, entries] : durable_) {
    for (const auto& entry : std::filesystem::directory_iterator(dir)) {
      if (entry.is_regular_file() && !untracked_.count(Name(entry.path().string()))) {
        std::filesystem::remove(entry.path());
      }
    }
    for (const auto& [name, identity] : entries) {
      const std::optional<std::string>& content = synced_[identity];
      std::ofstream out(dir + "/" + name, std::ios::binary | std::ios::trunc);
      if (content.has_value()) out << *content;  // never synced: an empty file
    }
  }
  live_.clear();
  durable_.clear();
  synced_.clear();
  crashed_ = false;
  crash_at_ = 0;
  operations_ = 0;
}

}  // namespace neardup::testing

#endif  // NEARDUP_TESTS_FAULT_INJECTION_ENV_H_
