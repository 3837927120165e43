require 'json'
require 'base64'
SKIP = %i[DSTR DXSTR DREGX DSYM EVSTR XSTR REGX ONCE].freeze
out = []
File.readlines(ARGV[0], chomp: true).each do |f|
  src = File.binread(f)
  starts = [0]
  src.each_byte.with_index { |b, i| starts << i + 1 if b == 10 }
  off = ->(l, c) { starts[l - 1] + c }
  begin
    ast = RubyVM::AbstractSyntaxTree.parse(src.dup.force_encoding('UTF-8'))
  rescue Exception
    next
  end
  vals = []
  walk = lambda do |n|
    return unless n.is_a?(RubyVM::AbstractSyntaxTree::Node)
    return if SKIP.include?(n.type)
    if n.type == :STR && n.children[0].is_a?(String)
      vals << { 'start' => off.(n.first_lineno, n.first_column), 'value' => Base64.strict_encode64(n.children[0].b) }
    end
    n.children.each { |c| walk.(c) }
  end
  walk.(ast)
  out << { 'file' => f, 'strings' => vals }
end
print JSON.generate(out)
