package dev.modelfs.hf;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * BPE merges of a SentencePiece vocabulary that has only scores, derived the way Hugging Face's
 * converter derives them ({@code convert_slow_tokenizer.generate_merges}) and in the order llama.cpp's
 * SPM tokenizer applies them: every split of a piece into two pieces of the vocabulary is a merge
 * ranked by the merged piece's score (higher first), then by the lengths of the left and right
 * pieces (longer first), then by vocabulary order.
 */
final class SpmMerges {
    private SpmMerges() {}

    private record Merge(String left, String right, float score, int order) {}

    static List<String[]> derive(List<String> tokens, float[] scores) {
        Map<String, Integer> ids = new HashMap<>(tokens.size() * 2);
        for (int i = 0; i < tokens.size(); i++) {
            ids.putIfAbsent(tokens.get(i), i);
        }
        List<Merge> all = new ArrayList<>();
        for (int i = 0; i < tokens.size(); i++) {
            String piece = tokens.get(i);
            List<int[]> local = new ArrayList<>();
            for (int cut = piece.offsetByCodePoints(0, Math.min(1, piece.codePointCount(0, piece.length())));
                 cut < piece.length(); cut = piece.offsetByCodePoints(cut, 1)) {
                Integer l = ids.get(piece.substring(0, cut)), r = ids.get(piece.substring(cut));
                if (l != null && r != null) {
                    local.add(new int[] {l, r, cut});
                }
            }
            local.sort(Comparator.<int[]>comparingInt(a -> a[0]).thenComparingInt(a -> a[1]));
            for (int[] a : local) {
                all.add(new Merge(piece.substring(0, a[2]), piece.substring(a[2]), scores[i], all.size()));
            }
        }
        all.sort(Comparator.comparingDouble((Merge m) -> -m.score())
                .thenComparingInt(m -> -m.left().codePointCount(0, m.left().length()))
                .thenComparingInt(m -> -m.right().codePointCount(0, m.right().length()))
                .thenComparingInt(Merge::order));
        List<String[]> out = new ArrayList<>(all.size());
        for (Merge m : all) {
            out.add(new String[] {m.left(), m.right()});
        }
        return out;
    }
}
