#pragma once
/// \file
/// A sequence whose elements are shared between copies until one copy
/// changes one: copy-on-write per element.
///
/// A state's nodes and edges live in CowLists, so that a recipe step, which
/// copies the whole program and then changes a handful of nodes, pays for a
/// pointer per element instead of a deep copy of every node and edge, and
/// frees only what it changed. Each element sits behind its own reference
/// count; copying the list shares them all.
///
/// Reading never copies: iteration, operator[], front() and back() give
/// `const T &`. Changing is explicit and copies the one element first when
/// another list still shares it:
///
///     for (const ir::Edge &e : state.edges)          // reads, shares
///       ...;
///     state.edges.edit(i).memlet = m;                // copies edge i once
///     state.edges.editWhere(                         // copies those chosen
///         [&](const ir::Edge &e) { return e.src == old; },
///         [&](ir::Edge &e) { e.src = fresh; });
///     for (ir::Edge &e : state.edges.editable())     // copies each visited
///       ...;
///
/// An element's address is its identity: two lists that show the same
/// element at the same address share it, so it is unchanged between them
/// (validation against a base version relies on this).

#include <algorithm>
#include <compare>
#include <cstddef>
#include <iterator>
#include <memory>
#include <type_traits>
#include <utility>
#include <vector>

namespace weir::ir {

template <typename T> class CowList {
  using Slot = std::shared_ptr<T>;
  using Slots = std::vector<Slot>;

  /// Random access over the slots, dereferencing to `Ref`.
  template <typename Ref, typename SlotIt> class Iterator {
  public:
    using iterator_category = std::random_access_iterator_tag;
    using iterator_concept = std::random_access_iterator_tag;
    using value_type = T;
    using difference_type = std::ptrdiff_t;
    using pointer = std::remove_reference_t<Ref> *;
    using reference = Ref;

    Iterator() = default;
    explicit Iterator(SlotIt at) : at_(at) {}

    reference operator*() const { return deref(*at_); }
    pointer operator->() const { return &deref(*at_); }
    reference operator[](difference_type n) const { return deref(at_[n]); }
    Iterator &operator++() {
      ++at_;
      return *this;
    }
    Iterator operator++(int) {
      Iterator was = *this;
      ++at_;
      return was;
    }
    Iterator &operator--() {
      --at_;
      return *this;
    }
    Iterator operator--(int) {
      Iterator was = *this;
      --at_;
      return was;
    }
    Iterator &operator+=(difference_type n) {
      at_ += n;
      return *this;
    }
    Iterator &operator-=(difference_type n) {
      at_ -= n;
      return *this;
    }
    friend Iterator operator+(Iterator it, difference_type n) {
      return it += n;
    }
    friend Iterator operator+(difference_type n, Iterator it) {
      return it += n;
    }
    friend Iterator operator-(Iterator it, difference_type n) {
      return it -= n;
    }
    friend difference_type operator-(const Iterator &a, const Iterator &b) {
      return a.at_ - b.at_;
    }
    friend bool operator==(const Iterator &a, const Iterator &b) {
      return a.at_ == b.at_;
    }
    friend auto operator<=>(const Iterator &a, const Iterator &b) {
      return a.at_ <=> b.at_;
    }

    SlotIt slot() const { return at_; }

  private:
    static Ref deref(const Slot &slot) {
      if constexpr (std::is_const_v<std::remove_reference_t<Ref>>)
        return *slot;
      else
        return detached(const_cast<Slot &>(slot));
    }
    SlotIt at_{};
  };

public:
  using value_type = T;
  using size_type = std::size_t;
  using difference_type = std::ptrdiff_t;
  using const_reference = const T &;
  using const_iterator = Iterator<const T &, typename Slots::const_iterator>;
  /// Reading is all a plain iterator does; see editable().
  using iterator = const_iterator;

  CowList() = default;

  std::size_t size() const { return slots_.size(); }
  bool empty() const { return slots_.empty(); }
  const_iterator begin() const { return const_iterator(slots_.cbegin()); }
  const_iterator end() const { return const_iterator(slots_.cend()); }
  const T &operator[](std::size_t i) const { return *slots_[i]; }
  const T &at(std::size_t i) const { return *slots_.at(i); }
  const T &front() const { return *slots_.front(); }
  const T &back() const { return *slots_.back(); }

  /// Element i for changing, copied first when another list shares it.
  T &edit(std::size_t i) { return detached(slots_[i]); }

  /// Every element for changing, in order: each one the loop reaches is
  /// copied first when shared. For loops that change most of what they
  /// visit; a loop that changes a few should read and edit() those.
  class Editable {
  public:
    using iterator = Iterator<T &, typename Slots::iterator>;
    explicit Editable(Slots &list) : slots_(&list) {}
    iterator begin() const { return iterator(slots_->begin()); }
    iterator end() const { return iterator(slots_->end()); }

  private:
    Slots *slots_;
  };
  Editable editable() { return Editable(slots_); }

  /// Calls `change(T &)` on each element `pred(const T &)` holds for, in
  /// order; only those are copied.
  template <typename Pred, typename Change>
  void editWhere(Pred pred, Change change) {
    for (Slot &slot : slots_)
      if (pred(std::as_const(*slot)))
        change(detached(slot));
  }

  void reserve(std::size_t n) { slots_.reserve(n); }
  void clear() { slots_.clear(); }
  void push_back(T item) {
    slots_.push_back(std::make_shared<T>(std::move(item)));
  }
  void pop_back() { slots_.pop_back(); }

  const_iterator insert(const_iterator at, T item) {
    return const_iterator(
        slots_.insert(at.slot(), std::make_shared<T>(std::move(item))));
  }
  /// Inserts copies of [first, last), which yield `const T &`. From another
  /// CowList's iterators the elements are shared, not copied.
  template <typename It>
  const_iterator insert(const_iterator at, It first, It last) {
    std::size_t offset = at - begin();
    if constexpr (std::is_same_v<It, const_iterator>) {
      slots_.insert(at.slot(), first.slot(), last.slot());
    } else {
      Slots added;
      for (; first != last; ++first)
        added.push_back(std::make_shared<T>(*first));
      slots_.insert(at.slot(), std::make_move_iterator(added.begin()),
                    std::make_move_iterator(added.end()));
    }
    return begin() + static_cast<std::ptrdiff_t>(offset);
  }
  const_iterator erase(const_iterator at) {
    return const_iterator(slots_.erase(at.slot()));
  }
  const_iterator erase(const_iterator first, const_iterator last) {
    return const_iterator(slots_.erase(first.slot(), last.slot()));
  }
  /// Removes the elements `pred(const T &)` holds for, keeping the order of
  /// the rest; returns how many went.
  template <typename Pred> std::size_t eraseIf(Pred pred) {
    return std::erase_if(
        slots_, [&](const Slot &slot) { return pred(std::as_const(*slot)); });
  }

  /// Reordering, sharing every element as it is.
  void swapAt(std::size_t i, std::size_t j) { std::swap(slots_[i], slots_[j]); }
  void rotate(const_iterator first, const_iterator middle,
              const_iterator last) {
    auto base = slots_.begin();
    std::rotate(base + (first.slot() - slots_.cbegin()),
                base + (middle.slot() - slots_.cbegin()),
                base + (last.slot() - slots_.cbegin()));
  }
  void reverse() { std::reverse(slots_.begin(), slots_.end()); }

  /// Copies into a plain vector (for callers that need one).
  std::vector<T> toVector() const {
    std::vector<T> out;
    out.reserve(slots_.size());
    for (const Slot &slot : slots_)
      out.push_back(*slot);
    return out;
  }

private:
  static T &detached(Slot &slot) {
    if (slot.use_count() != 1)
      slot = std::make_shared<T>(std::as_const(*slot));
    return *slot;
  }

  Slots slots_;
};

} // namespace weir::ir
