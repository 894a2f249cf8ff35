package dev.modelfs.fuse;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class WorkerGrowthTest {
    @Test
    void aWorkerIsStartedWhenTheLastWaitingOneTakesARequestUpToTheBound() {
        List<Integer> startedNow = new ArrayList<>();
        WorkerGrowth g = new WorkerGrowth(2, 4, startedNow::add);
        g.taken();                                  // one of two still waits
        assertEquals(List.of(), startedNow);
        g.taken();                                  // none waits: worker 2 starts
        assertEquals(List.of(2), startedNow);
        g.taken();                                  // worker 2 took it: worker 3 starts
        assertEquals(List.of(2, 3), startedNow);
        g.taken();                                  // at the bound: no fifth worker
        assertEquals(List.of(2, 3), startedNow);
        assertEquals(4, g.started());
        g.done();
        g.done();
        g.taken();                                  // one is still waiting after this one
        assertEquals(List.of(2, 3), startedNow);
    }

    @Test
    void requestsAnsweredOneAtATimeNeverGrowThePool() {
        List<Integer> startedNow = new ArrayList<>();
        WorkerGrowth g = new WorkerGrowth(2, 66, startedNow::add);
        for (int i = 0; i < 1000; i++) {
            g.taken();
            g.done();
        }
        assertEquals(List.of(), startedNow);
        assertEquals(2, g.started());
    }
}
