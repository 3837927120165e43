defmodule Oracle do
  @placeholder "pgpoolcheck_param"
  def value(parts, unescape) do
    parts
    |> Enum.map(fn
      b when is_binary(b) -> if unescape, do: Macro.unescape_string(b), else: b
      l when is_list(l) -> List.to_string(l)
      _ -> @placeholder
    end)
    |> Enum.join()
  end

  def run(list) do
    files = File.read!(list) |> String.split("\n", trim: true)
    items =
      Enum.flat_map(files, fn f ->
        src = File.read!(f)
        lines = String.split(src, "\n")
        starts = Enum.scan(lines, 0, fn l, acc -> acc + byte_size(l) + 1 end)
        starts = [0 | starts]
        off = fn l, c ->
          line = Enum.at(lines, l - 1)
          Enum.at(starts, l - 1) + byte_size(String.slice(line, 0, c - 1))
        end
        case :elixir_tokenizer.tokenize(String.to_charlist(src), 1, 1, []) do
          {:ok, _, _, _, toks} ->
            strs =
              Enum.flat_map(toks, fn
                {t, {l, c, _}, parts} when t in [:bin_string, :list_string] -> [{off.(l, c), value(parts, false)}]
                {t, {l, c, _}, _, parts} when t in [:bin_heredoc, :list_heredoc] -> [{off.(l, c), value(parts, false)}]
                {:sigil, {l, c, _}, name, parts, _, _, _} when name in [?s, ?S] -> [{off.(l, c), value(parts, name == ?s)}]
                _ -> []
              end)
            body = Enum.map_join(strs, ",", fn {s, v} -> ~s({"start":#{s},"end":-1,"value":"#{Base.encode64(v)}"}) end)
            [~s({"file":"#{f}","strings":[#{body}]})]
          _ -> []
        end
      end)
    IO.write("[" <> Enum.join(items, ",") <> "]")
  end
end
Oracle.run(hd(System.argv()))
