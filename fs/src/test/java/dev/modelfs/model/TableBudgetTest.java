package dev.modelfs.model;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/** The per-model and total limits of {@link TableBudget}, and what releasing gives back. */
class TableBudgetTest {
    @Test
    void aModelOverItsOwnLimitReservesNothing() throws Exception {
        TableBudget b = new TableBudget(100, 1000);
        TableBudget.Account a = b.account();
        a.reserve(60);
        TableBudget.OverBudget e = assertThrows(TableBudget.OverBudget.class, () -> a.reserve(41));
        assertTrue(e.getMessage().contains("per-model memory budget: 101 tensors, at most 100"), e.getMessage());
        assertEquals(60, a.held());
        assertEquals(60, b.used());
    }

    @Test
    void theTotalIsSharedAndReleasedModelsGiveTheirShareBack() throws Exception {
        TableBudget b = new TableBudget(100, 250);
        TableBudget.Account x = b.account();
        TableBudget.Account y = b.account();
        TableBudget.Account z = b.account();
        x.reserve(100);
        y.reserve(100);
        TableBudget.OverBudget e = assertThrows(TableBudget.OverBudget.class, () -> z.reserve(51));
        assertTrue(e.getMessage().contains("mount's memory budget: 200 of 250"), e.getMessage());
        assertEquals(200, b.used());
        x.release();
        z.reserve(51);
        assertEquals(151, b.used());
        assertThrows(TableBudget.OverBudget.class, () -> x.reserve(1), "a released account reserves nothing again");
        z.clear();
        z.reserve(100);                                    // a rebuild starts from nothing
        assertEquals(200, b.used());
    }
}
