// The static list's sizing (gpulb/static_list_sizing.hpp): what each array gets before a launch,
// after a launch that filled it, within the memory there is, and the refusal's numbers.
#include <gtest/gtest.h>

#include <string>

#include "gpulb/static_list_sizing.hpp"
#include "gpulb/static_task_list.hpp"

using namespace gpulb;

TEST(ListSizer, TheFirstOutputArrayHasListCapacityOrAFirstGuessCutToTheWidestGeneration) {
  EXPECT_EQ(ListSizer(0, 0).before_launch(1), kFirstListSlots);
  EXPECT_EQ(ListSizer(7, 0).before_launch(1), 7u);
  EXPECT_EQ(ListSizer(0, 1000).before_launch(1), 1000u);
  EXPECT_EQ(ListSizer(5000, 1000).before_launch(1),
            5000u);  // the user's floor wins over the estimate
}

TEST(ListSizer, LaterArraysFollowTheLastGenerationsRatioWithAQuarterToSpare) {
  ListSizer s(0, 0);
  s.generation_ended(100000, 400000);  // 4 children a task
  EXPECT_EQ(s.before_launch(400000), 2000001u);
  EXPECT_EQ(s.before_launch(4), kFirstListSlots);  // a small generation gets the first guess's room
  ListSizer capped(0, 1500000);
  capped.generation_ended(100000, 400000);
  EXPECT_EQ(capped.before_launch(400000),
            1500000u);  // never more than the widest generation stated
  ListSizer floored(3, 0);
  floored.generation_ended(1, 4);
  EXPECT_EQ(floored.before_launch(4), 21u);  // a list_capacity is a floor, not a first guess's room
}

// The last level of a tree has no children: the tasks the run expects bound what is still to come.
TEST(ListSizer, TheTasksStillToComeBoundTheNextGeneration) {
  ListSizer s(0, 0, 2'000'000);
  s.generation_ended(100000, 400000);              // 100,000 launched
  EXPECT_EQ(s.before_launch(400000), 1'500'000u);  // not 2,000,001: only 1.5 M tasks are left
  ListSizer wrong(0, 0, 10);                       // an expectation the run has passed is ignored
  wrong.generation_ended(100000, 400000);
  EXPECT_EQ(wrong.before_launch(400000), 2'000'001u);
}

TEST(ListSizer, AfterAFullArrayItGrowsToTheProjectedGenerationAndAtLeastWhatWasAsked) {
  const ListSizer s(0, 0);
  // 1000 slots asked by 100 of 400 tasks: 4000 projected, an eighth to spare.
  EXPECT_EQ(s.after_overflow(1000, 100, 400), 4500u);
  // Every task has run: a quarter more than asked.
  EXPECT_EQ(s.after_overflow(1000, 400, 400), 1250u);
  // A stated widest generation caps the estimate, never below what was asked.
  EXPECT_EQ(ListSizer(0, 1100).after_overflow(1000, 100, 400), 1100u);
  EXPECT_EQ(ListSizer(0, 10).after_overflow(1000, 100, 400), 1000u);
}

TEST(ListSizer, MemoryCutsWhatIsWantedButNeverBelowWhatIsNeeded) {
  const std::uint64_t gib = std::uint64_t{1} << 30;
  const std::uint64_t fits = list_budget_bytes(gib) / sizeof(Task);
  EXPECT_LT(fits, gib / sizeof(Task));  // a margin is kept
  EXPECT_EQ(fit_list_slots(100, 10, gib), 100u);
  EXPECT_EQ(fit_list_slots(fits * 2, 10, gib), fits);
  EXPECT_EQ(fit_list_slots(fits * 2, fits + 1, gib), 0u);  // even the need does not fit
  EXPECT_EQ(fit_list_slots(5, 5, 0), 0u);
}

TEST(ListSizer, TheRefusalNamesTheGenerationTheSlotsTheMemoryAndWhatToDo) {
  const std::string m = list_memory_refusal(14, 1u << 30, "GPU 1", std::uint64_t{20} << 30,
                                            std::uint64_t{60} << 30, "cudaMemGetInfo");
  for (const char* part :
       {"generation 14", "1073741824 task slots", "64.0 GiB", "GPU 1",
        "60.0 GiB free (cudaMemGetInfo)", "20.0 GiB", "--gpus N", "work-stealing"}) {
    EXPECT_NE(m.find(part), std::string::npos) << part << " in: " << m;
  }
  EXPECT_NE(list_memory_refusal(0, 10, "host memory", 0, 1, "MemAvailable")
                .find("the widest generation the scenario states"),
            std::string::npos);
}

// The append writes every slot below the capacity, so the held rests fill [capacity, tail) exactly.
TEST(StaticTaskList, AnAppendPastTheCapacityWritesWhatFitsAndHoldsTheRest) {
  HostStaticTaskList list;
  Task root;
  list.load(&root, 1, 0);
  list.reserve_output(5);
  const StaticTaskListRef ref = list.ref();
  Task batch[4];
  for (std::uint32_t i = 0; i < 4; ++i) batch[i].id = 10 + i;
  EXPECT_TRUE(ref.enqueue(batch, 3).complete());
  const ListAppend straddles = ref.enqueue(batch, 4);  // slots 3..6: 3 and 4 written
  EXPECT_FALSE(straddles.complete());
  EXPECT_EQ(straddles.written, 2u);
  const HeldChildren h = held_rest(straddles);
  EXPECT_EQ(h.slot, 5u);
  EXPECT_EQ(h.offset, 2u);
  EXPECT_EQ(h.count, 2u);
  const ListAppend beyond = ref.enqueue(batch, 1);  // slot 7: nothing written
  EXPECT_EQ(beyond.written, 0u);
  EXPECT_EQ(list.tail(), 8u);
  list.reserve_output(8);
  list.place(h, batch);
  list.place(held_rest(beyond), batch);
  const std::uint32_t n = list.swap();
  ASSERT_EQ(n, 8u);
  const StaticTaskListRef next = list.ref();
  const std::uint32_t want[8] = {10, 11, 12, 10, 11, 12, 13, 10};
  for (std::uint32_t i = 0; i < 8; ++i) EXPECT_EQ(next.dequeue(i).id, want[i]) << "slot " << i;
}
