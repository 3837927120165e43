require 'ripper'
require 'json'
out = []
File.readlines(ARGV[0], chomp: true).each do |f|
  src = File.binread(f).force_encoding('UTF-8')
  next unless src.valid_encoding?
  starts = [0]
  src.each_byte.with_index { |b, i| starts << i + 1 if b == 10 }
  off = ->(l, c) { starts[l - 1] + c }
  depth = 0
  strings = []
  stack = []
  Ripper.lex(src).each do |(l, c), type, tok, _|
    case type
    when :on_embexpr_beg then depth += 1
    when :on_embexpr_end then depth -= 1
    when :on_tstring_beg
      if depth == 0
        strings << { 'start' => off.(l, c), 'end' => -1, 'value' => nil }
        stack << strings.size - 1
      else
        stack << nil
      end
    when :on_tstring_end, :on_label_end
      i = stack.pop
      strings[i]['end'] = off.(l, c) + (type == :on_label_end ? 1 : tok.bytesize) if i
    when :on_heredoc_beg
      strings << { 'start' => off.(l, c), 'end' => -1, 'value' => nil } if depth == 0 && !tok.include?('`')
    end
  end
  strings.sort_by! { |s| s['start'] }
  out << { 'file' => f, 'strings' => strings }
end
print JSON.generate(out)
